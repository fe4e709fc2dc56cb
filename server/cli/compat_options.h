// llama-server's options that are about the process rather than the model or the API: logging,
// --version and --list-devices, and the options this build cannot honour, each refused with its reason
// (downloads, devices and features ggserve does not have), so that a llama-server command line never
// fails with "unknown option".
#pragma once

#include <string>

#include "server/cli/args.h"

namespace cli {

struct LogOptions {
    bool verbose = false;  // -v: everything (spdlog trace), and __verbose in API responses
    int verbosity = -1;    // -lv N: 0 output only, 1 errors, 2 warnings, 3 info, 4 debug, 5 trace; -1: unset
    bool disable = false;  // --log-disable: nothing on the console
    std::string file;      // --log-file: also (or only, with --log-disable) to this file
    std::string colors = "auto";  // --log-colors on|off|auto
    bool prefix = true;           // --log-prefix / --no-log-prefix: the level tag
    bool timestamps = true;       // --log-timestamps / --no-log-timestamps
    bool jsonl = false;           // --log-jsonl: one JSON object per line (JsonlLogFormatter)
};

void add_log_options(ArgParser& ap, LogOptions& lo);
// Installs the "ggserve" default logger (stderr and/or the file) with the chosen level and pattern.
// Throws ArgError when the log file cannot be opened.
void setup_logging(const LogOptions& lo, const std::string& name = "ggserve");

// --version and --list-devices: print and exit (before the model options are checked).
struct InfoRequests {
    bool version = false;
    bool list_devices = false;
};
void add_info_options(ArgParser& ap, InfoRequests& ir);
// Prints what was asked for to stdout; returns whether anything was (the command then exits 0).
bool print_info(const InfoRequests& ir);
// "ggserve <version> (<commit>)".
std::string version_string();

// Options of llama-server that fetch from the network (-hf, --model-url, ...): refused, saying why.
void add_download_options(ArgParser& ap);
// Options of llama-server for features ggserve does not have (multiple GPUs, RPC, multimodal projectors,
// control vectors, group attention, ...): refused with the reason. Serve and run share them.
void add_unsupported_options(ArgParser& ap);
// llama-server's context checkpoint options (-ctxcp, -cms, -cpent): checkpoints let llama.cpp reuse a prefix
// of models whose cache cannot be cut back (sliding-window layers that dropped old cells, recurrent state).
// ggserve's sliding-window layers keep every cell and it has no recurrent models, so a prefix is always
// reusable: the options are checked and accepted, and change nothing (as with llama-server's --swa-full).
void add_checkpoint_options(ArgParser& ap);
// --ui-config, --ui-mcp-proxy and their aliases, refused where there is no chat UI (ggserve run).
void refuse_server_ui_options(ArgParser& ap);
// -cram and --cache-idle-slots, refused by `run` (the host-memory prompt cache is the server's).
void refuse_server_cache_options(ArgParser& ap);
// --tools and -ag/--agent, refused by the commands that serve no HTTP (`run`).
void refuse_tool_options(ArgParser& ap);
// The router's options (`serve` without -m), refused by the commands that run one model.
void refuse_router_options(ArgParser& ap);

}  // namespace cli
