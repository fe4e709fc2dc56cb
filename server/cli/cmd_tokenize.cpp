// `ggserve tokenize -m MODEL -p TEXT [--no-bos]`: prints the token ids as a JSON array.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/tokenizer/vocab.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"

namespace cli {

int cmd_tokenize(int argc, char** argv) {
    std::string model, prompt;
    bool no_bos = false, no_parse_special = false, pieces = false;
    ArgParser ap("tokenize");
    ap.option("-m,--model", "FILE", "GGUF model (or vocabulary-only GGUF)", &model);
    ap.option("-p,--prompt", "TEXT", "text to tokenize", &prompt);
    ap.flag("--no-bos", "do not add the BOS (and other special tokens the vocabulary adds)", &no_bos);
    ap.flag("--no-parse-special", "treat special-token text as plain text", &no_parse_special);
    ap.flag("--pieces", "print [id, piece] pairs instead of ids", &pieces);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (model.empty()) throw ArgError("missing -m MODEL");
        if (!ap.given("prompt")) throw ArgError("missing -p TEXT");
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve tokenize: %s\n", e.what());
        return 2;
    }
    try {
        const engine::Vocab vocab = engine::Vocab::from_file(model);
        const auto ids = vocab.tokenize(prompt, !no_bos, !no_parse_special);
        nlohmann::json out = nlohmann::json::array();
        for (engine::Token id : ids)
            out.push_back(pieces ? nlohmann::json::array({id, vocab.token_to_piece(id)}) : nlohmann::json(id));
        const std::string text = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        std::fputs(text.c_str(), stdout);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve tokenize: %s\n", e.what());
        return 1;
    }
}

}  // namespace cli
