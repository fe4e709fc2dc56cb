// `ggserve quantize [options] IN.gguf [OUT.gguf] TYPE [nthreads]`: llama-quantize's command line over
// engine/quantize. Usage errors (unknown options or types, missing arguments) exit with 2 as the other
// commands' do; a refused or failed conversion (unreadable input, requantizing without
// --allow-requantize, an unwritable output) exits with 1.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "engine/quantize/quantize.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"

namespace cli {

namespace {

using engine::quant::FileTypeInfo;

ggml::Type parse_weight_type(const std::string& opt, const std::string& v) {
    ggml::Type t;
    if (!ggml::type_from_name(v.c_str(), &t)) throw ArgError(opt + ": invalid ggml_type '" + v + "'");
    if (const std::string why = engine::quant::why_not_writable(t); !why.empty()) throw ArgError(opt + ": " + why);
    return t;
}

// NAME=TYPE; NAME is a regular expression searched in tensor names (lower-cased, as llama-quantize does).
engine::quant::TensorTypeOverride parse_tensor_type(const std::string& v) {
    const size_t eq = v.find('=');
    if (eq == std::string::npos) throw ArgError("--tensor-type: malformed tensor type '" + v + "' (expected NAME=TYPE)");
    if (eq == 0) throw ArgError("--tensor-type: missing tensor name in '" + v + "'");
    if (eq + 1 == v.size()) throw ArgError("--tensor-type: missing quantization type in '" + v + "'");
    std::string name = v.substr(0, eq);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return {name, parse_weight_type("--tensor-type", v.substr(eq + 1))};
}

// llama-quantize's --override-kv: one KEY=TYPE:VALUE per option; ints are stored as u32 of |VALUE|,
// floats as f32; strings hold at most 127 bytes.
std::pair<std::string, ggml::gguf::Value> parse_override(const std::string& v) {
    const size_t eq = v.find('=');
    const size_t colon = eq == std::string::npos ? std::string::npos : v.find(':', eq);
    if (eq == std::string::npos || eq == 0 || colon == std::string::npos)
        throw ArgError("--override-kv: malformed '" + v + "' (expected KEY=TYPE:VALUE)");
    const std::string key = v.substr(0, eq), type = v.substr(eq + 1, colon - eq - 1), val = v.substr(colon + 1);
    if (key.size() > 127) throw ArgError("--override-kv: the key of '" + v + "' is longer than 127 bytes");
    if (type == "int") {
        char* end = nullptr;
        errno = 0;
        const long long x = std::strtoll(val.c_str(), &end, 10);
        if (val.empty() || *end || errno) throw ArgError("--override-kv: '" + val + "' is not an integer");
        return {key, ggml::gguf::Value::u32(uint32_t(std::llabs(x)))};
    }
    if (type == "float") return {key, ggml::gguf::Value::f32((float)ArgParser::to_double("--override-kv", val))};
    if (type == "bool") {
        if (val != "true" && val != "false") throw ArgError("--override-kv: a bool is true or false, not '" + val + "'");
        return {key, ggml::gguf::Value::boolean(val == "true")};
    }
    if (type == "str") {
        if (val.size() > 127) throw ArgError("--override-kv: the string value of '" + key + "' is longer than 127 bytes");
        return {key, ggml::gguf::Value::string(val)};
    }
    throw ArgError("--override-kv: type '" + type + "' is not int, float, bool or str");
}

std::string type_list() {
    std::string s = "\nallowed quantization types:\n";
    for (const FileTypeInfo& ft : engine::quant::file_types()) {
        char line[160];
        if (std::string(ft.name) == "COPY")
            std::snprintf(line, sizeof line, "          %-9s : %s\n", ft.name, ft.description);
        else
            std::snprintf(line, sizeof line, "  %2u  or  %-9s : %s\n", unsigned(ft.ftype), ft.name, ft.description);
        s += line;
    }
    return s;
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
    engine::quant::QuantizeOptions o;
    std::vector<std::string> pos;
    ArgParser ap("quantize");
    ap.without_env();
    ap.positionals(&pos, "IN.gguf [OUT.gguf] TYPE [nthreads]");
    ap.flag("--allow-requantize", "allow requantizing tensors that are already quantized (lower quality than "
            "quantizing from 16 or 32 bits)", &o.allow_requantize);
    ap.flag("--leave-output-tensor", "leave output.weight un(re)quantized", &o.leave_output_tensor);
    ap.flag("--pure", "no k-quant mixture: every quantizable tensor gets TYPE (ragged rows still fall back)", &o.pure);
    ap.add("--output-tensor-type", "TYPE", "type of output.weight (and of tied token embeddings)",
           [&](const std::string& v) { o.output_tensor_type = parse_weight_type("--output-tensor-type", v); });
    ap.add("--token-embedding-type", "TYPE", "type of the token embeddings",
           [&](const std::string& v) { o.token_embedding_type = parse_weight_type("--token-embedding-type", v); });
    ap.add("--tensor-type", "NAME=TYPE", "quantize tensors whose name matches the regex NAME to TYPE (repeatable; "
           "the first match wins), e.g. --tensor-type attn_q=q8_0",
           [&](const std::string& v) { o.tensor_types.push_back(parse_tensor_type(v)); });
    ap.add("--tensor-type-file", "FILE", "NAME=TYPE entries separated by spaces or newlines", [&](const std::string& v) {
        std::ifstream in(v);
        if (!in) throw ArgError("--tensor-type-file: cannot open '" + v + "'");
        for (std::string e; in >> e;) o.tensor_types.push_back(parse_tensor_type(e));
    });
    ap.add("--override-kv", "KEY=TYPE:VALUE", "set a metadata value in the output (int, float, bool, str; repeatable)",
           [&](const std::string& v) { o.kv_overrides.push_back(parse_override(v)); });
    ap.flag("--dry-run", "print the type and size of every tensor without writing a file", &o.dry_run);
    ap.flag("--keep-split", "write the output as llama-quantize does for split models: OUT-00001-of-00001.gguf "
            "(ggserve reads single-file models only, so the input must be one file)", &o.keep_split);
    const std::string no_imatrix = "ggserve does not read importance matrices; the types that need one (IQ1_S, IQ1_M, "
                                   "IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS, IQ3_XS, Q2_K_S) are refused";
    ap.refuse("--imatrix", true, no_imatrix);
    ap.refuse("--include-weights", true, no_imatrix);
    ap.refuse("--exclude-weights", true, no_imatrix);
    ap.refuse("--prune-layers", true, "layer pruning is not implemented");
    ap.refuse("--target-bpw", true, "automatic type selection for a size target is not implemented");
    ap.refuse("--target-size", true, "automatic type selection for a size target is not implemented");
    ap.refuse("--state-file", false, "automatic type selection (and its state file) is not implemented");

    const FileTypeInfo* ft = nullptr;
    try {
        if (!ap.parse(argc, argv)) {
            std::fputs(type_list().c_str(), stdout);
            return 0;
        }
        if (pos.size() < 2) throw ArgError("bad arguments: expected IN.gguf [OUT.gguf] TYPE [nthreads]");
        o.input = pos[0];
        size_t next = 1;
        if ((ft = engine::quant::parse_file_type(pos[1]))) {
            // IN TYPE: the output goes beside the input as ggml-model-TYPE.gguf.
            const size_t slash = o.input.find_last_of('/');
            o.output = (slash == std::string::npos ? "" : o.input.substr(0, slash + 1)) + "ggml-model-" + ft->name +
                       (o.keep_split ? "" : ".gguf");
            next = 2;
        } else {
            o.output = pos[1];
            if (pos.size() < 3) throw ArgError("missing TYPE");
            ft = engine::quant::parse_file_type(pos[2]);
            if (!ft) {
                const std::string why = engine::quant::unsupported_file_type_reason(pos[2]);
                throw ArgError(why.empty() ? "invalid TYPE '" + pos[2] + "' (see --help for the list)" : why);
            }
            next = 3;
        }
        if (pos.size() > next) {
            char* end = nullptr;
            const long n = std::strtol(pos[next].c_str(), &end, 10);
            if (pos[next].empty() || *end || n > 4096 || n < -1)
                throw ArgError("invalid nthreads '" + pos[next] + "'");
            o.n_threads = (int)n;
            ++next;
        }
        if (pos.size() > next) throw ArgError("unexpected argument '" + pos[next] + "'");
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve quantize: %s\n", e.what());
        if (pos.size() < 2) std::fputs(ap.usage().c_str(), stderr);
        return 2;
    }
    o.ftype = ft->ftype;
    o.only_copy = std::string(ft->name) == "COPY";

    std::fprintf(stderr, "ggserve quantize: %s '%s'%s%s as %s", o.dry_run ? "sizing" : "quantizing", o.input.c_str(),
                 o.dry_run ? "" : " to '", o.dry_run ? "" : (o.output + "'").c_str(), ft->name);
    if (o.n_threads > 0) std::fprintf(stderr, " using %d threads", o.n_threads);
    std::fprintf(stderr, "\n");
    const auto t0 = std::chrono::steady_clock::now();
    try {
        const auto rep = engine::quant::quantize_model(o, [](const std::string& line) {
            std::fprintf(stdout, "%s\n", line.c_str());
            std::fflush(stdout);
        });
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!rep.output_path.empty()) std::fprintf(stdout, "wrote %s\n", rep.output_path.c_str());
        std::fprintf(stdout, "quantize time = %8.2f ms\n", ms);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve quantize: error: %s\n", e.what());
        return 1;
    }
}

}  // namespace cli
