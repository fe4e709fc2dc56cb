// `ggserve info -m MODEL`: the model as the engine reads it (architecture, RoPE type and scaling, sliding
// window, experts), then the metadata and tensor table of the GGUF file.
#include <cstdio>

#include "engine/model/hparams.h"
#include "ggml/gguf.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"

namespace cli {

int cmd_info(int argc, char** argv) {
    std::string model;
    ArgParser ap("info");
    ap.option("-m,--model", "FILE", "GGUF file to describe", &model);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (model.empty()) throw ArgError("missing -m MODEL");
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve info: %s\n", e.what());
        return 2;
    }
    try {
        auto f = ggml::gguf::File::open(model);
        std::printf("file: %s\nGGUF version: %u, alignment: %zu, %zu metadata entries, %zu tensors\n\n", model.c_str(),
                    f->version(), f->alignment(), f->metadata().size(), f->tensors().size());
        try {
            engine::HParams h = engine::HParams::from_gguf(*f);
            if (h.n_vocab == 0) h.n_vocab = (uint32_t)f->get_string_array("tokenizer.ggml.tokens").size();
            for (const std::string& line : engine::describe_model(h, *f)) std::printf("%s\n", line.c_str());
        } catch (const std::exception& e) {
            std::printf("model: not loadable by this build: %s\n", e.what());
        }
        std::printf("\nmetadata:\n");
        for (const auto& [k, v] : f->metadata())
            std::printf("  %-44s %-8s %s\n", k.c_str(), ggml::gguf::value_type_name(v.type), v.to_display().c_str());
        std::printf("\ntensors:\n  %-36s %-7s %-28s %12s %12s\n", "name", "type", "shape", "offset", "bytes");
        size_t total = 0;
        uint64_t params = 0;
        for (const auto& t : f->tensors()) {
            std::string shape = "[";
            for (int i = 0; i < t.n_dims; ++i) shape += (i ? ", " : "") + std::to_string(t.ne[i]);
            shape += "]";
            std::printf("  %-36s %-7s %-28s %12llu %12zu\n", t.name.c_str(), ggml::type_name(t.type), shape.c_str(),
                        (unsigned long long)t.offset, t.size);
            total += t.size;
            params += (uint64_t)t.nelements();
        }
        std::printf("\n%llu parameters, %.2f MiB of tensor data\n", (unsigned long long)params, total / 1048576.0);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve info: %s\n", e.what());
        return 1;
    }
}

}  // namespace cli
