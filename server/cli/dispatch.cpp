// Picks the subcommand from argv[1].
#include <cstdio>
#include <cstring>

#include "server/cli/commands.h"
#include "server/cli/compat_options.h"

namespace cli {

static void print_usage(FILE* out) {
    std::fprintf(out,
                 "usage: ggserve <command> [options]\n"
                 "commands:\n"
                 "  serve      start the OpenAI-compatible HTTP server\n"
                 "  run        generate text from a prompt\n"
                 "  tokenize   print the token ids of a text\n"
                 "  info       print a model's metadata and tensors\n"
                 "  bench      measure prompt and generation speed (llama-bench's interface)\n"
                 "  quantize   rewrite a GGUF model with quantized weights (llama-quantize's interface)\n"
                 "  loadgen    drive a running server with concurrent streams and report latencies\n"
                 "run 'ggserve <command> --help' for the options of a command\n");
}

int main_dispatch(int argc, char** argv) {
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char* cmd = argv[1];
    if (!std::strcmp(cmd, "-h") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "help")) {
        print_usage(stdout);
        return 0;
    }
    if (!std::strcmp(cmd, "--version") || !std::strcmp(cmd, "version")) {
        InfoRequests ir;
        ir.version = true;
        print_info(ir);
        return 0;
    }
    struct Cmd {
        const char* name;
        int (*fn)(int, char**);
    };
    static const Cmd kCommands[] = {{"run", cmd_run},           {"serve", cmd_serve},
                                    {"loadgen", cmd_loadgen},   {"bench", cmd_bench},
                                    {"tokenize", cmd_tokenize}, {"info", cmd_info},
                                    {"quantize", cmd_quantize}};
    for (const auto& c : kCommands)
        if (!std::strcmp(cmd, c.name)) return c.fn(argc, argv);
    std::fprintf(stderr, "ggserve: unknown command '%s'\n", cmd);
    print_usage(stderr);
    return 2;
}

}  // namespace cli
