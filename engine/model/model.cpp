#include "engine/model/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "engine/model/arch/arch.h"
#include "engine/model/weight_loader.h"
#include "engine/tokenizer/vocab.h"

namespace engine {

Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path, const ModelParams& params) {
    std::unique_ptr<Model> m(new Model());
    m->path_ = path;
    ggml::gguf::OpenOptions oo;
    oo.mmap = params.use_mmap;
    oo.mlock = params.use_mlock;
    m->file_ = ggml::gguf::File::open(path, oo);
    for (const auto& [key, value] : params.kv_overrides) m->file_->override_value(key, value);
    if (params.check_tensors) {
        const std::vector<std::string> bad = find_invalid_tensor_values(*m->file_);
        if (!bad.empty()) {
            std::string msg = "'" + path + "': --check-tensors found invalid values in " +
                              std::to_string(bad.size()) + " tensor(s): ";
            for (size_t i = 0; i < bad.size() && i < 8; ++i) msg += (i ? "; " : "") + bad[i];
            if (bad.size() > 8) msg += "; ...";
            throw std::runtime_error(msg);
        }
    }
    m->hp_ = HParams::from_gguf(*m->file_, params.rope);
    m->arch_ = find_arch(m->hp_.arch);
    m->vocab_ = std::make_unique<Vocab>(Vocab::from_gguf(*m->file_));
    HParams& h = m->hp_;
    const int64_t n_vocab = m->vocab_->n_tokens();
    if (h.n_vocab != 0 && h.n_vocab != (uint32_t)n_vocab)
        throw std::runtime_error("model metadata: vocab_size " + std::to_string(h.n_vocab) +
                                 " differs from the tokenizer's " + std::to_string(n_vocab) + " tokens");
    h.n_vocab = (uint32_t)n_vocab;
    m->layers.resize(h.n_layer);  // never resized again: the weight slots point into it
    WeightLoader loader(*m);
    loader.refuse_undeclared_experts(m->arch_->experts);
    m->arch_->load_weights(loader);
    if (params.n_gpu_layers > 0) m->offload(params);
    return m;
}

std::string Model::description() const {
    std::map<ggml::Type, uint64_t> bytes_by_type;
    // The repeating layers' matrices (norms and biases are f32 in every file).
    for (const WeightSlot& s : slots_)
        if (s.layer >= 0 && (*s.slot)->n_dims() >= 2) bytes_by_type[(*s.slot)->type] += (*s.slot)->nbytes();
    ggml::Type dom = ggml::Type::F32;
    uint64_t best = 0;
    for (auto& [t, b] : bytes_by_type)
        if (b > best) best = b, dom = t;
    const double np = (double)n_params_;
    char size[32];
    if (np >= 1e9) snprintf(size, sizeof size, "%.1fB", np / 1e9);
    else if (np >= 1e6) snprintf(size, sizeof size, "%.0fM", np / 1e6);
    else snprintf(size, sizeof size, "%.0fK", np / 1e3);
    std::string tname = ggml::type_name(dom);
    for (auto& c : tname) c = (char)toupper(c);
    return hp_.arch + " " + size + " " + tname;
}

std::vector<std::string> find_invalid_tensor_values(const ggml::gguf::File& f) {
    std::vector<std::string> bad;
    std::vector<float> row;
    for (const ggml::gguf::TensorInfo& t : f.tensors()) {
        const ggml::TypeTraits& tr = ggml::type_traits(t.type);
        if (!tr.to_float || t.ne[0] % tr.block_size != 0) continue;  // validated by the reader already
        const int64_t ne0 = t.ne[0], nrows = t.nelements() / std::max<int64_t>(ne0, 1);
        const size_t rsize = ggml::row_size(t.type, ne0);
        row.resize((size_t)ne0);
        const auto* base = static_cast<const uint8_t*>(t.data);
        bool found = false;
        for (int64_t r = 0; r < nrows && !found; ++r) {
            tr.to_float(base + (size_t)r * rsize, row.data(), ne0);
            for (int64_t i = 0; i < ne0; ++i)
                if (!std::isfinite(row[(size_t)i])) {
                    bad.push_back(t.name + " (" + ggml::type_name(t.type) + ") element " +
                                  std::to_string(r * ne0 + i) + " is " +
                                  (std::isnan(row[(size_t)i]) ? "NaN" : row[(size_t)i] > 0 ? "+inf" : "-inf"));
                    found = true;
                    break;
                }
        }
    }
    return bad;
}

std::string Model::chat_template() const { return file_->get_string("tokenizer.chat_template", ""); }

}  // namespace engine
