#include "engine/model/lora.h"

#include <cstdlib>
#include <set>
#include <vector>
#include <stdexcept>

#include "engine/model/model.h"

namespace engine {

namespace {

constexpr const char* kSuffixA = ".lora_a";
constexpr const char* kSuffixB = ".lora_b";

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dims(const int64_t* ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

[[noreturn]] void fail_in(const std::string& path, const std::string& why) {
    throw std::runtime_error("LoRA adapter " + path + ": " + why);
}

}  // namespace

LoraAdapter::~LoraAdapter() = default;

std::unique_ptr<LoraAdapter> LoraAdapter::load(const std::string& path, const Model& base) {
    auto fail = [&](const std::string& why) { fail_in(path, why); };
    std::unique_ptr<LoraAdapter> lora(new LoraAdapter());
    lora->path_ = path;
    try {
        lora->file_ = ggml::gguf::File::open(path);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    const ggml::gguf::File& f = *lora->file_;
    if (f.get_string("general.type") != "adapter") fail("not an adapter file (general.type is not \"adapter\")");
    const std::string kind = f.get_string("adapter.type");
    if (kind != "lora") fail("adapter.type is \"" + kind + "\"; only \"lora\" adapters are supported");
    const std::string arch = f.get_string("general.architecture");
    const std::string base_arch = base.gguf().get_string("general.architecture");
    if (arch != base_arch) fail("made for architecture \"" + arch + "\", the model is \"" + base_arch + "\"");
    lora->alpha_ = (float)f.get_float("adapter.lora.alpha", 0.0);
    lora->task_name_ = f.get_string("adapter.lora.task_name");
    lora->prompt_prefix_ = f.get_string("adapter.lora.prompt_prefix");
    // Activated LoRA applies from an invocation sequence in the prompt on; applied everywhere it would
    // be a different model. Not supported: llama-server 0.7.0, measured, gives the base model's output
    // with one enabled (docs/compatibility.md).
    if (f.has("adapter.alora.invocation_tokens"))
        fail("activated LoRA adapters (adapter.alora.invocation_tokens) are not supported");

    std::set<std::string> bases;
    for (const auto& t : f.tensors()) {
        if (ends_with(t.name, kSuffixA))
            bases.insert(t.name.substr(0, t.name.size() - 7));
        else if (ends_with(t.name, kSuffixB))
            bases.insert(t.name.substr(0, t.name.size() - 7));
        else
            fail("tensor '" + t.name + "' is neither a .lora_a nor a .lora_b tensor");
    }
    if (bases.empty()) fail("no tensors");
    for (const std::string& name : bases) {
        const ggml::gguf::TensorInfo* a = f.find_tensor(name + kSuffixA);
        const ggml::gguf::TensorInfo* b = f.find_tensor(name + kSuffixB);
        if (!a || !b) fail_in(path, "'" + name + "' has only one of .lora_a and .lora_b");
        if (name == "token_embd.weight" || name.find("_exps") != std::string::npos)
            fail("'" + name + "': adapters of token embeddings and of expert tensors are not supported");
        const ggml::gguf::TensorInfo* w = base.gguf().find_tensor(name);
        if (!w) fail_in(path, "'" + name + "' is not a tensor of the model");
        if (w->n_dims != 2 || a->n_dims != 2 || b->n_dims != 2)
            fail("'" + name + "': the weight and both LoRA tensors must be matrices");
        // W [in, out], A [in, r], B [r, out].
        if (a->ne[0] != w->ne[0] || b->ne[1] != w->ne[1] || a->ne[1] != b->ne[0])
            fail("'" + name + "': shapes " + dims(a->ne, 2) + " and " + dims(b->ne, 2) + " do not fit the weight " +
                 dims(w->ne, 2) + " (want [in, r] and [r, out])");
        for (const ggml::gguf::TensorInfo* t : {a, b}) {
            if (!ggml::type_traits(t->type).to_float && t->type != ggml::Type::F32)
                fail("'" + t->name + "' has type " + ggml::type_name(t->type) + ", which cannot be multiplied");
            if (t->ne[0] % ggml::block_size(t->type) != 0)
                fail("'" + t->name + "': a row of " + std::to_string(t->ne[0]) + " values is not whole blocks of " +
                     ggml::type_name(t->type));
        }
        auto tensor = [&](const ggml::gguf::TensorInfo* ti) {
            ggml::Tensor* t = lora->ctx_.new_tensor(ti->type, 2, ti->ne);
            t->data = const_cast<void*>(ti->data);
            t->flags |= ggml::kFlagParam;
            t->set_name(ti->name);
            return t;
        };
        const float r = (float)a->ne[1];
        lora->pairs_[name] = Pair{tensor(a), tensor(b), lora->alpha_ != 0.0f ? lora->alpha_ / r : 1.0f};
    }
    // Twins on the offload backend for the pairs of offloaded weights (blk.N of an offloaded layer; the
    // output matrix when it moved).
    if (ggml::Backend* dev = base.offload_backend()) {
        auto offloaded = [&](const std::string& name) {
            if (name.rfind("blk.", 0) == 0) {
                const long il = std::strtol(name.c_str() + 4, nullptr, 10);
                return il >= 0 && (uint32_t)il < base.hparams().n_layer && base.layer_backend((uint32_t)il) == dev;
            }
            return name.rfind("output.", 0) == 0 && base.output_offloaded();
        };
        std::vector<ggml::Tensor*> twins;
        std::vector<std::pair<ggml::Tensor*, const ggml::Tensor*>> uploads;
        for (auto& [name, pair] : lora->pairs_) {
            if (!offloaded(name)) continue;
            for (ggml::Tensor** t : {&pair.a, &pair.b}) {
                ggml::Tensor* twin = lora->offload_ctx_.new_tensor((*t)->type, 2, (*t)->ne);
                twin->set_name((*t)->name);
                twin->flags |= ggml::kFlagParam;
                twins.push_back(twin);
                uploads.emplace_back(twin, *t);
                *t = twin;
            }
        }
        if (!twins.empty()) {
            lora->offload_buffer_ = ggml::alloc_tensors(*dev, twins);
            for (const auto& [twin, src] : uploads) ggml::tensor_set(twin, src->data, 0, src->nbytes());
            dev->synchronize();
        }
    }
    return lora;
}

const LoraAdapter::Pair* LoraAdapter::find(const char* weight_name) const {
    auto it = pairs_.find(weight_name);
    return it == pairs_.end() ? nullptr : &it->second;
}

}  // namespace engine
