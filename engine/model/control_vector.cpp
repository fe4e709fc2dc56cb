#include "engine/model/control_vector.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "engine/model/arch/arch.h"
#include "engine/model/model.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

[[noreturn]] void fail_in(const std::string& path, const std::string& why) {
    throw std::runtime_error("control vector " + path + ": " + why);
}

// N of "direction.N" (N >= 1), or 0 when the name is not one.
long direction_layer(const std::string& name) {
    static const std::string kPrefix = "direction.";
    if (name.rfind(kPrefix, 0) != 0 || name.size() == kPrefix.size()) return 0;
    const char* digits = name.c_str() + kPrefix.size();
    if (*digits < '0' || *digits > '9') return 0;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(digits, &end, 10);
    return *end == '\0' && errno == 0 && n <= 1000000 ? n : 0;
}

// Adds one file, times its scale, into sum.
void add_file(const ControlVectorFile& cv, ControlVectorSum& sum) {
    auto fail = [&](const std::string& why) { fail_in(cv.path, why); };
    std::unique_ptr<ggml::gguf::File> f;
    try {
        f = ggml::gguf::File::open(cv.path);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    if (f->tensors().empty()) fail("no direction tensors (want direction.1, direction.2, ...)");
    int64_t n_embd = 0;
    for (const ggml::gguf::TensorInfo& t : f->tensors()) {
        const long il = direction_layer(t.name);
        if (il <= 0)
            fail("tensor '" + t.name + "' is not a direction tensor 'direction.N' with a layer N >= 1");
        if (t.type != ggml::Type::F32)
            fail("'" + t.name + "' has type " + ggml::type_name(t.type) + "; direction tensors are F32");
        if (t.n_dims != 1) fail("'" + t.name + "' is not one-dimensional");
        if (n_embd == 0) n_embd = t.ne[0];
        if (t.ne[0] != n_embd)
            fail("'" + t.name + "' has " + std::to_string(t.ne[0]) + " values, the file's other directions " +
                 std::to_string(n_embd));
        if (sum.n_embd != 0 && t.ne[0] != sum.n_embd)
            fail("directions of " + std::to_string(t.ne[0]) + " values do not match the other files' " +
                 std::to_string(sum.n_embd));
        sum.n_embd = n_embd;
        if (sum.layers.size() < (size_t)il) sum.layers.resize((size_t)il);
        std::vector<float>& dst = sum.layers[(size_t)il - 1];
        dst.resize((size_t)n_embd, 0.0f);
        const float* src = (const float*)t.data;
        for (int64_t j = 0; j < n_embd; ++j) dst[(size_t)j] += src[j] * cv.scale;
    }
}

}  // namespace

ControlVectorSum sum_control_vectors(const std::vector<ControlVectorFile>& files) {
    ControlVectorSum sum;
    for (const ControlVectorFile& f : files) add_file(f, sum);
    for (auto& l : sum.layers) l.resize((size_t)sum.n_embd, 0.0f);  // layers no file has
    return sum;
}

ControlVector::~ControlVector() = default;

size_t ControlVector::n_steered() const {
    return (size_t)std::count_if(tensors_.begin(), tensors_.end(),
                                 [](const ggml::Tensor* t) { return t != nullptr; });
}

std::unique_ptr<ControlVector> ControlVector::create(const ControlVectorSum& sum, const Model& base,
                                                     int layer_start, int layer_end) {
    const HParams& hp = base.hparams();
    if (!base.arch().steerable)
        throw std::runtime_error(
            std::string("control vectors: the ") + base.arch().name +
            " architecture is an encoder; control vectors steer decoder layers (llama.cpp "
            "adds none to an encoder either)");
    if (sum.n_embd != (int64_t)hp.n_embd)
        throw std::runtime_error("control vectors have " + std::to_string(sum.n_embd) +
                                 " values per layer; the model's n_embd is " + std::to_string(hp.n_embd));
    std::unique_ptr<ControlVector> cv(new ControlVector());
    cv->start_ = layer_start <= 0 ? 1 : layer_start;
    cv->end_ = layer_end <= 0 ? (int)hp.n_layer : layer_end;
    if (cv->start_ > cv->end_)
        throw std::runtime_error("--control-vector-layer-range " + std::to_string(layer_start) + " " +
                                 std::to_string(layer_end) + ": the start is after the end");
    cv->tensors_.assign(hp.n_layer, nullptr);
    // direction.N steers layer N: N = n_layer and beyond name layers the model does not have.
    for (size_t i = (size_t)hp.n_layer - 1; i < sum.layers.size(); ++i)
        if (std::any_of(sum.layers[i].begin(), sum.layers[i].end(), [](float x) { return x != 0.0f; }))
            ++cv->ignored_;
    // The values live in data_ (one block, never reallocated once the tensors point into it).
    std::vector<uint32_t> steered;
    for (uint32_t il = 1; il < hp.n_layer && il <= sum.layers.size(); ++il) {
        const std::vector<float>& d = sum.layers[il - 1];
        if ((int)il < cv->start_ || (int)il > cv->end_) continue;
        if (std::all_of(d.begin(), d.end(), [](float x) { return x == 0.0f; })) continue;
        steered.push_back(il);
    }
    cv->data_.reserve(steered.size() * (size_t)sum.n_embd);
    for (uint32_t il : steered) {
        const std::vector<float>& d = sum.layers[il - 1];
        const size_t off = cv->data_.size();
        cv->data_.insert(cv->data_.end(), d.begin(), d.end());
        ggml::Tensor* t = cv->ctx_.new_tensor_1d(ggml::Type::F32, sum.n_embd);
        t->data = cv->data_.data() + off;
        t->flags |= ggml::kFlagParam;
        t->set_name("cvec." + std::to_string(il));
        cv->tensors_[il] = t;
    }
    // Offloaded layers get twins on the device, as their weights do.
    if (ggml::Backend* dev = base.offload_backend()) {
        std::vector<ggml::Tensor*> twins;
        std::vector<std::pair<ggml::Tensor*, const ggml::Tensor*>> uploads;
        for (uint32_t il : steered) {
            if (base.layer_backend(il) != dev) continue;
            ggml::Tensor* twin = cv->offload_ctx_.new_tensor_1d(ggml::Type::F32, sum.n_embd);
            twin->set_name(cv->tensors_[il]->name);
            twin->flags |= ggml::kFlagParam;
            twins.push_back(twin);
            uploads.emplace_back(twin, cv->tensors_[il]);
            cv->tensors_[il] = twin;
        }
        if (!twins.empty()) {
            cv->offload_buffer_ = ggml::alloc_tensors(*dev, twins);
            for (const auto& [twin, src] : uploads) ggml::tensor_set(twin, src->data, 0, src->nbytes());
            dev->synchronize();
        }
    }
    return cv;
}

}  // namespace engine
