#include "engine/quantize/quantize.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "ggml/quants.h"

namespace engine::quant {

namespace {

using ggml::Type;
using Log = std::function<void(const std::string&)>;

std::string fmt(const char* f, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, f, args...);
    return buf;
}

// Runs fn(first_row, end_row) over [0, nrows) in chunks of at least ~16k values on up to n_threads
// threads; the first exception thrown is rethrown here.
void parallel_rows(int n_threads, int64_t nrows, int64_t row_values, const std::function<void(int64_t, int64_t)>& fn) {
    const int64_t chunk = std::max<int64_t>(1, (16384 + row_values - 1) / std::max<int64_t>(1, row_values));
    const int64_t n_chunks = (nrows + chunk - 1) / chunk;
    const int n = (int)std::max<int64_t>(1, std::min<int64_t>(n_threads, n_chunks));
    if (n == 1) {
        fn(0, nrows);
        return;
    }
    std::atomic<int64_t> next{0};
    std::exception_ptr error;
    std::mutex mu;
    auto work = [&] {
        try {
            for (int64_t c; (c = next.fetch_add(1)) < n_chunks;) fn(c * chunk, std::min(nrows, (c + 1) * chunk));
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!error) error = std::current_exception();
            next = n_chunks;
        }
    };
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
}

// Rows [r0, r1) of a tensor of type t hold only finite values; returns the first row that does not, or -1.
int64_t first_bad_row(Type t, const void* data, int64_t ne0, int64_t r0, int64_t r1) {
    const auto& tt = ggml::type_traits(t);
    const size_t rs = ggml::row_size(t, ne0);
    std::vector<float> row(t == Type::F32 ? 0 : size_t(ne0));
    for (int64_t r = r0; r < r1; ++r) {
        const float* v;
        if (t == Type::F32) {
            v = reinterpret_cast<const float*>(static_cast<const char*>(data) + size_t(r) * rs);
        } else {
            tt.to_float(static_cast<const char*>(data) + size_t(r) * rs, row.data(), ne0);
            v = row.data();
        }
        for (int64_t i = 0; i < ne0; ++i)
            if (!std::isfinite(v[i])) return r;
    }
    return -1;
}

// Checks a whole tensor; throws naming the first row with a NaN or an infinity.
void check_finite(int n_threads, const std::string& name, const char* what, Type t, const void* data, int64_t ne0,
                  int64_t nrows) {
    if (!ggml::type_traits(t).to_float) return;  // integer tensors
    std::atomic<int64_t> bad{INT64_MAX};
    parallel_rows(n_threads, nrows, ne0, [&](int64_t r0, int64_t r1) {
        const int64_t r = first_bad_row(t, data, ne0, r0, r1);
        if (r < 0) return;
        int64_t cur = bad.load();
        while (r < cur && !bad.compare_exchange_weak(cur, r)) {
        }
    });
    if (bad.load() != INT64_MAX)
        throw QuantizeError("tensor " + name + ": " + what + " row " + std::to_string(bad.load()) +
                            " contains NaN or infinity");
}

std::string shape_of(const TensorDesc& t) {
    std::string s;
    for (int i = 0; i < 4; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
    return s;
}

bool is_split_key(const std::string& k) { return k == "split.no" || k == "split.count" || k == "split.tensors.count"; }

}  // namespace

std::string why_not_writable(Type t) {
    switch (t) {
        case Type::IQ2_XXS:
        case Type::IQ2_XS:
        case Type::IQ2_S:
        case Type::IQ1_S:
        case Type::IQ1_M:
            return std::string("ggserve cannot write ") + ggml::type_name(t) +
                   ": llama.cpp quantizes it only with an importance matrix, and ggserve does not read those";
        case Type::Q8_1:
        case Type::Q8_K:
            return std::string(ggml::type_name(t)) + " is an activation format, not a weight type";
        case Type::I8:
        case Type::I16:
        case Type::I32:
        case Type::I64:
        case Type::F64:
            return std::string(ggml::type_name(t)) + " is a storage type, not a quantization target";
        default:
            break;
    }
    if (!ggml::type_is_known((int32_t)t) || !ggml::type_traits(t).from_float_ref)
        return std::string("ggserve cannot write tensors of type ") + ggml::type_name(t);
    return "";
}

QuantizeReport quantize_model(const QuantizeOptions& o, const Log& log) {
    QuantizeReport rep;
    const int n_threads = o.n_threads > 0 ? o.n_threads : (int)std::max(1u, std::thread::hardware_concurrency());

    std::string out_path = o.output;
    if (o.keep_split) {
        if (out_path.size() >= 5 && out_path.compare(out_path.size() - 5, 5, ".gguf") == 0)
            out_path.resize(out_path.size() - 5);
        out_path += "-00001-of-00001.gguf";
    }
    if (!o.dry_run) {
        if (out_path.empty()) throw QuantizeError("no output file given");
        std::error_code ec;
        if (std::filesystem::equivalent(o.input, out_path, ec))
            throw QuantizeError("input and output files are the same: '" + o.input + "'");
    }

    std::unique_ptr<ggml::gguf::File> f;
    try {
        f = ggml::gguf::File::open(o.input);
    } catch (const std::exception& e) {
        throw QuantizeError("cannot read '" + o.input + "': " + e.what());
    }
    if (f->get_int("split.count", 1) > 1)
        throw QuantizeError("'" + o.input + "' is shard " + std::to_string(f->get_int("split.no", 0) + 1) + " of " +
                            std::to_string(f->get_int("split.count", 1)) +
                            " of a split model; ggserve reads single-file models only (merge the shards "
                            "first, e.g. with llama-gguf-split --merge)");

    // Output metadata: the input's, in order, then the keys llama-quantize sets last.
    std::vector<std::pair<std::string, ggml::gguf::Value>> kv;
    for (const auto& [k, v] : f->metadata())
        if (k != "general.quantization_version" && k != "general.file_type" && !is_split_key(k)) kv.emplace_back(k, v);

    std::vector<TensorDesc> tensors;
    std::map<std::string, const ggml::gguf::TensorInfo*> info;
    for (const auto& t : f->tensors()) {
        TensorDesc d;
        d.name = t.name;
        d.type = t.type;
        for (int i = 0; i < 4; ++i) d.ne[i] = t.ne[i];
        tensors.push_back(d);
        info[t.name] = &t;
    }
    sort_weights(tensors);

    uint32_t ftype_written = uint32_t(o.ftype);
    if (o.only_copy) {
        const auto* v = f->find("general.file_type");
        ftype_written = v ? uint32_t(v->as_int()) : guess_file_type([&] {
            std::vector<Type> types;
            for (const auto& t : tensors) types.push_back(t.type);
            return types;
        }());
    }
    kv.emplace_back("general.quantization_version", ggml::gguf::Value::u32(2));
    kv.emplace_back("general.file_type", ggml::gguf::Value::u32(ftype_written));
    for (const auto& [k, v] : o.kv_overrides) {
        std::erase_if(kv, [&](const auto& e) { return e.first == k; });
        kv.emplace_back(k, v);
        f->override_value(k, v);  // the mix rules see overridden hyper-parameters, as in llama.cpp
    }

    ModelFacts facts;
    try {
        facts = ModelFacts::from_gguf(*f);
    } catch (const std::exception& e) {
        throw QuantizeError(std::string("cannot read the model's hyper-parameters: ") + e.what());
    }
    MixOptions mo;
    mo.ftype = o.ftype;
    mo.pure = o.pure;
    mo.quantize_output = !o.leave_output_tensor;
    mo.only_copy = o.only_copy;
    mo.output_type = o.output_tensor_type;
    mo.token_embd_type = o.token_embedding_type;
    mo.tensor_types = o.tensor_types;
    std::vector<TensorChoice> choice;
    try {
        choice = choose_types(facts, tensors, mo);
    } catch (const std::exception& e) {
        throw QuantizeError(e.what());
    }

    // Refusals, all before anything is written.
    std::vector<std::string> warnings;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorDesc& t = tensors[i];
        const TensorChoice& c = choice[i];
        std::string err;
        // As in llama.cpp, even a tensor already in that type is refused.
        if (c.quantizable && c.requires_imatrix)
            err = "this quantization requires an importance matrix (tensor " + t.name + " would be " +
                  ggml::type_name(c.type) + "), and ggserve does not read importance matrices";
        else if (c.type == t.type)
            continue;
        else if (std::string why = why_not_writable(c.type); !why.empty())
            err = "tensor " + t.name + ": " + why;
        else if (!ggml::type_traits(t.type).to_float)
            err = "tensor " + t.name + ": cannot convert from type " + ggml::type_name(t.type);
        else if (ggml::type_traits(t.type).is_quantized && !o.allow_requantize)
            err = std::string("requantizing from type ") + ggml::type_name(t.type) + " is disabled (tensor " + t.name +
                  "); pass --allow-requantize to allow it (quality is lower than quantizing from 16 or 32 bits)";
        if (err.empty()) continue;
        if (!o.dry_run) throw QuantizeError(err);
        warnings.push_back(err);
    }

    std::vector<ggml::gguf::StreamWriter::TensorDecl> decls;
    for (size_t i = 0; i < tensors.size(); ++i) {
        ggml::gguf::StreamWriter::TensorDecl d;
        d.name = tensors[i].name;
        d.type = choice[i].type;
        d.n_dims = tensors[i].n_dims();
        for (int k = 0; k < 4; ++k) d.ne[k] = tensors[i].ne[k];
        decls.push_back(d);
    }
    std::unique_ptr<ggml::gguf::StreamWriter> w;
    if (!o.dry_run) {
        try {
            w = std::make_unique<ggml::gguf::StreamWriter>(out_path, kv, decls);
        } catch (const std::exception& e) {
            throw QuantizeError(e.what());
        }
    }

    std::vector<float> f32;
    std::vector<uint8_t> qbuf;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorDesc& t = tensors[i];
        const ggml::gguf::TensorInfo& ti = *info[t.name];
        const Type to = choice[i].type;
        const int64_t ne0 = t.ne[0], nrows = t.ne[1] * t.ne[2] * t.ne[3];
        const size_t out_size = ggml::row_size(to, ne0) * size_t(nrows);
        std::string line = fmt("[%4zu/%4zu] %-36s - [%s], type = %6s, ", i + 1, tensors.size(), t.name.c_str(),
                               shape_of(t).c_str(), ggml::type_name(t.type));
        rep.bytes_in += ti.size;
        rep.bytes_out += out_size;
        rep.n_elements += uint64_t(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]);
        rep.n_fallback += choice[i].fallback;
        if (to == t.type) {
            if (!o.dry_run) {
                check_finite(n_threads, t.name, "input", t.type, ti.data, ne0, nrows);
                w->write_tensor(ti.data, ti.size);
            }
            log(line + fmt("size = %8.3f MiB", ti.size / 1048576.0));
            continue;
        }
        ++rep.n_quantized;
        line += fmt("converting to %s%s .. ", ggml::type_name(to), choice[i].fallback ? " (fallback)" : "");
        if (!o.dry_run) {
            const float* src;
            if (t.type == Type::F32) {
                src = static_cast<const float*>(ti.data);
            } else {
                f32.resize(size_t(ne0) * size_t(nrows));
                const auto to_float = ggml::type_traits(t.type).to_float;
                const size_t rs = ggml::row_size(t.type, ne0);
                parallel_rows(n_threads, nrows, ne0, [&](int64_t r0, int64_t r1) {
                    to_float(static_cast<const char*>(ti.data) + size_t(r0) * rs, f32.data() + size_t(r0 * ne0),
                             (r1 - r0) * ne0);
                });
                src = f32.data();
            }
            check_finite(n_threads, t.name, "input", Type::F32, src, ne0, nrows);
            qbuf.resize(out_size);
            const size_t rs = ggml::row_size(to, ne0);
            parallel_rows(n_threads, nrows, ne0, [&](int64_t r0, int64_t r1) {
                ggml::quantize_rows(to, src + size_t(r0 * ne0), qbuf.data() + size_t(r0) * rs, r1 - r0, ne0);
            });
            if (to != Type::F32) check_finite(n_threads, t.name, "quantized", to, qbuf.data(), ne0, nrows);
            w->write_tensor(qbuf.data(), qbuf.size());
        }
        log(line + fmt("size = %8.2f MiB -> %8.2f MiB", ti.size / 1048576.0, out_size / 1048576.0));
    }
    for (const auto& wmsg : warnings) log("warning: a real run would fail: " + wmsg);
    rep.n_tensors = tensors.size();
    if (w) {
        w->finish();
        rep.output_path = out_path;
    }
    const double n = double(std::max<uint64_t>(1, rep.n_elements));
    log(fmt("model size  = %8.2f MiB (%.2f BPW)", rep.bytes_in / 1048576.0, rep.bytes_in * 8.0 / n));
    log(fmt("quant size  = %8.2f MiB (%.2f BPW)", rep.bytes_out / 1048576.0, rep.bytes_out * 8.0 / n));
    if (rep.n_fallback)
        log(fmt("%zu of %zu tensor(s) required fallback quantization", rep.n_fallback, rep.n_tensors));
    return rep;
}

}  // namespace engine::quant
