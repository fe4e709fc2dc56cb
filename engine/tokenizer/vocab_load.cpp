// Vocab::from_gguf: reads and validates the tokenizer.ggml.* metadata, then derives what llama.cpp
// derives at load time (end-of-generation set, special-token cache, per-model attribute fixes).
#include <algorithm>
#include <cctype>

#include "engine/tokenizer/vocab_impl.h"
#include "ggml/gguf.h"

namespace engine {

using detail::VocabImpl;

namespace {

constexpr const char* kPrefix = "tokenizer.ggml.";

std::string key(const char* name) {
    return std::string(kPrefix) + name;
}

[[noreturn]] void error(const std::string& what) {
    throw VocabError("tokenizer metadata: " + what);
}

// GGUF token types (the tokenizer.ggml.token_type values) as attributes.
uint32_t attr_from_type(int64_t type, size_t index) {
    switch (type) {
        case 0:
            return kAttrUndefined;
        case 1:
            return kAttrNormal;
        case 2:
            return kAttrUnknown;
        case 3:
            return kAttrControl;
        case 4:
            return kAttrUserDefined;
        case 5:
            return kAttrUnused;
        case 6:
            return kAttrByte;
        default:
            error("token_type[" + std::to_string(index) + "] = " + std::to_string(type) +
                  " is not a token type (0..6)");
    }
}

void set_defaults(VocabImpl& v) {
    if (v.model == "llama") {
        v.type = VocabType::SPM;
        v.bos = 1, v.eos = 2, v.unk = 0;
        v.add_space_prefix = true;
        v.add_bos = true;
    } else if (v.model == "bert") {
        v.type = VocabType::WPM;
        v.bos = 101, v.unk = 100, v.sep = 102, v.pad = 0, v.mask = 103;
        v.add_bos = true;
        v.add_sep = true;
        v.clean_spaces = true;
    } else if (v.model == "gpt2") {
        v.type = VocabType::BPE;
        v.bos = 11, v.eos = 11;
        const PreTokenizerSpec* spec = find_pre_tokenizer(v.pre);
        if (!spec) error("unknown pre-tokenizer '" + v.pre + "' (tokenizer.ggml.pre)");
        v.clean_spaces = spec->clean_spaces;
        v.ignore_merges = spec->ignore_merges;
        v.add_bos = spec->add_bos;
        v.add_sep = spec->add_sep;
        if (spec->no_bos) v.bos = kNoToken;
        v.pre_tokenizer = std::make_unique<PreTokenizer>(*spec);
    } else if (v.model == "none" || v.model == "no_vocab") {
        error("the model has no vocabulary (tokenizer.ggml.model = '" + v.model + "')");
    } else {
        error("unsupported tokenizer model '" + v.model + "' (tokenizer.ggml.model)");
    }
}

void load_tokens(VocabImpl& v, const ggml::gguf::File& f) {
    if (!f.has(key("tokens"))) error("tokenizer.ggml.tokens is missing");
    std::vector<std::string> texts = f.get_string_array(key("tokens"));
    if (texts.empty()) error("tokenizer.ggml.tokens is empty");
    if (texts.size() > size_t(INT32_MAX)) error("too many tokens");
    const size_t n = texts.size();

    std::vector<float> scores;
    if (f.has(key("scores"))) {
        scores = f.get_float_array(key("scores"));
        if (scores.size() != n)
            error("tokenizer.ggml.scores has " + std::to_string(scores.size()) + " entries for " +
                  std::to_string(n) + " tokens");
    }
    std::vector<int64_t> types;
    if (f.has(key("token_type"))) {
        types = f.get_int_array(key("token_type"));
        if (types.size() != n)
            error("tokenizer.ggml.token_type has " + std::to_string(types.size()) + " entries for " +
                  std::to_string(n) + " tokens");
    }

    v.tokens.resize(n);
    v.token_to_id.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto& t = v.tokens[i];
        t.text = std::move(texts[i]);
        if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";
        t.score = scores.empty() ? 0.0f : scores[i];
        t.attr = types.empty() ? kAttrNormal : attr_from_type(types[i], i);
        auto [it, inserted] = v.token_to_id.emplace(t.text, Token(i));
        if (!inserted)
            error("duplicate token '" + t.text + "' at ids " + std::to_string(it->second) + " and " +
                  std::to_string(i));
        v.max_token_len = std::max(v.max_token_len, t.text.size());
    }
}

void load_merges(VocabImpl& v, const ggml::gguf::File& f) {
    if (!f.has(key("merges"))) error("tokenizer.ggml.merges is missing (required by gpt2 vocabularies)");
    const std::vector<std::string> merges = f.get_string_array(key("merges"));
    v.bpe_ranks.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        // "left right"; the left part may itself start with a space, so search from index 1.
        const size_t sp = merges[i].find(' ', 1);
        if (sp == std::string::npos) continue;
        v.bpe_ranks.emplace(merges[i], int(std::min<size_t>(i, INT32_MAX)));
    }
}

// A special-token id key: absent keeps the default (disabled if the default is out of range);
// -1 (also as uint32) means none; anything else must be a valid id.
void load_special_id(const ggml::gguf::File& f, const char* name, Token& id, size_t n) {
    if (id >= 0 && size_t(id) >= n) id = kNoToken;
    const std::string k = key(name);
    if (!f.has(k)) return;
    const int64_t value = f.get_int(k, -1);
    if (value == -1 || value == int64_t(UINT32_MAX)) {
        id = kNoToken;
        return;
    }
    if (value < 0 || uint64_t(value) >= n)
        error(k + " = " + std::to_string(value) + " is out of range (vocabulary has " + std::to_string(n) +
              " tokens)");
    id = Token(value);
}

void load_special_ids(VocabImpl& v, const ggml::gguf::File& f) {
    const size_t n = v.tokens.size();
    const std::pair<const char*, Token*> ids[] = {
        {"bos_token_id", &v.bos},         {"eos_token_id", &v.eos},         {"eot_token_id", &v.eot},
        {"eom_token_id", &v.eom},         {"unknown_token_id", &v.unk},     {"seperator_token_id", &v.sep},
        {"padding_token_id", &v.pad},     {"mask_token_id", &v.mask},       {"fim_pre_token_id", &v.fim_pre},
        {"fim_suf_token_id", &v.fim_suf}, {"fim_mid_token_id", &v.fim_mid}, {"fim_pad_token_id", &v.fim_pad},
        {"fim_rep_token_id", &v.fim_rep}, {"fim_sep_token_id", &v.fim_sep}, {"prefix_token_id", &v.fim_pre},
        {"suffix_token_id", &v.fim_suf},  {"middle_token_id", &v.fim_mid},
    };
    for (const auto& [name, id] : ids) load_special_id(f, name, *id, n);

    v.add_bos = f.get_bool(key("add_bos_token"), v.add_bos);
    v.add_eos = f.get_bool(key("add_eos_token"), v.add_eos);
    v.add_sep = f.get_bool(key("add_sep_token"), v.add_sep);
    if (v.add_bos && v.bos == kNoToken) error("add_bos_token is true but there is no BOS token");
    if (v.add_eos && v.eos == kNoToken) error("add_eos_token is true but there is no EOS token");
    if (v.add_sep && v.sep == kNoToken) error("add_sep_token is true but there is no SEP token");
}

bool any_of(std::string_view s, std::initializer_list<std::string_view> texts) {
    return std::find(texts.begin(), texts.end(), s) != texts.end();
}

// The lowest id among the tokens with one of these texts (deterministic where several exist).
Token lowest_with_text(const VocabImpl& v, std::initializer_list<std::string_view> texts) {
    Token best = kNoToken;
    for (auto text : texts) {
        const Token id = v.find(text);
        if (id != kNoToken && (best == kNoToken || id < best)) best = id;
    }
    return best;
}

// Tokens that end generation or mark infill positions are recognized by their text when the metadata
// does not name them (as llama.cpp does); such tokens are made control tokens.
void detect_by_text(VocabImpl& v) {
    struct Rule {
        Token* id;
        std::initializer_list<std::string_view> texts;
    };
    const Rule rules[] = {
        {&v.eot,
         {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
          "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
        {&v.eom, {"<|eom_id|>"}},
        {&v.fim_pre,
         {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
          "<|code_prefix|>"}},
        {&v.fim_suf,
         {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
          "<|code_suffix|>"}},
        {&v.fim_mid,
         {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
          "<|code_middle|>"}},
        {&v.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"}},
        {&v.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
        {&v.fim_sep, {"<|file_sep|>"}},
    };
    for (const Rule& r : rules) {
        if (*r.id != kNoToken) continue;
        const Token id = lowest_with_text(v, r.texts);
        if (id == kNoToken) continue;
        *r.id = id;
        v.tokens[size_t(id)].attr |= kAttrControl;
    }
    for (auto& t : v.tokens)
        if ((t.attr & kAttrControl) && t.text.find("unused") != std::string::npos) t.attr |= kAttrUnused;
}

// End of generation: the special ids that end it, and every token named in llama.cpp's list (0.7.0,
// build 11669), which also becomes a control token (so plain-text input never produces it).
void build_eog(VocabImpl& v) {
    std::vector<Token> eog;
    for (Token id : {v.fim_pad, v.fim_rep, v.fim_sep, v.eos, v.eot, v.eom})
        if (id != kNoToken) eog.push_back(id);
    Token end = kNoToken;
    bool has_return = false, has_call = false, has_flush = false;
    for (std::string_view text :
         {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
          "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
          "<|end_of_text|>", "<end_of_utterance>", "<｜end▁of▁sentence｜>", "</s>", "<eos>", "<turn|>",
          "<|tool_response>", "[e~["}) {
        const Token id = v.find(text);
        if (id == kNoToken) continue;
        eog.push_back(id);
        v.tokens[size_t(id)].attr |= kAttrControl;
        if (text == "<|end|>") end = id;
        has_return |= text == "<|return|>";
        has_call |= text == "<|call|>" || text == "<|calls|>";
        has_flush |= text == "<|flush|>";
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    // Harmony-style vocabularies end a message with <|end|> but keep generating after it.
    if (end != kNoToken && has_call && (has_return || has_flush)) {
        eog.erase(std::find(eog.begin(), eog.end(), end));
        v.tokens[size_t(end)].attr = kAttrUserDefined;
    }
    v.eog = std::move(eog);
}

// gpt-oss's message framing tokens are control tokens in its files, but its replies are read back from
// them (channels, recipients, tool calls): as llama.cpp does, they are user-defined, so that generated
// text shows them without --special, and prompts may write them.
void render_harmony_markers(VocabImpl& v) {
    for (std::string_view text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
        const Token id = v.find(text);
        if (id != kNoToken) v.tokens[size_t(id)].attr = kAttrUserDefined;
    }
}

void build_special_cache(VocabImpl& v) {
    v.special_tokens.clear();
    for (size_t i = 0; i < v.tokens.size(); ++i)
        if (v.tokens[i].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown))
            v.special_tokens.push_back(Token(i));
    std::stable_sort(v.special_tokens.begin(), v.special_tokens.end(), [&](Token a, Token b) {
        return v.tokens[size_t(a)].text.size() > v.tokens[size_t(b)].text.size();
    });
}

// Per-model lstrip/rstrip attributes that GGUF files do not carry.
void fix_attributes(VocabImpl& v, const ggml::gguf::File& f) {
    std::string name = f.get_string("general.name", "");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const std::string arch = f.get_string("general.architecture", "");
    auto set = [&](std::string_view text, uint32_t attr, bool on) {
        const Token id = v.find(text);
        if (id == kNoToken) return;
        auto& a = v.tokens[size_t(id)].attr;
        a = on ? (a | attr) : (a & ~attr);
    };
    const bool jina = any_of(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
                      any_of(arch, {"nomic-bert-moe", "jina-bert-v3"});
    if (jina) {
        set("<mask>", kAttrLstrip, true);
    } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (Token id : v.special_tokens) v.tokens[size_t(id)].attr |= kAttrRstrip;
        set("</s>", kAttrRstrip, true);
        for (auto t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, kAttrRstrip, false);
    } else if (name.find("modern-bert") != std::string::npos) {
        set("[MASK]", kAttrLstrip, true);
    }
}

void find_newline(VocabImpl& v) {
    if (v.type == VocabType::SPM) {
        v.nl = v.byte_token('\n');
        if (v.nl == kNoToken) v.nl = v.pad;
    } else if (v.type == VocabType::WPM) {
        v.nl = v.pad;
    } else {
        std::vector<Token> ids;
        detail::tokenize_bpe(v, "\n", ids);
        v.nl = ids.empty() ? v.pad : ids[0];
    }
}

}  // namespace

Vocab Vocab::from_gguf(const ggml::gguf::File& f) {
    auto v = std::make_unique<VocabImpl>();
    if (!f.has(key("model")))
        error("tokenizer.ggml.model is missing: the model has no tokenizer (vocabulary-less GGUF)");
    v->model = f.get_string(key("model"));
    v->pre = f.get_string(key("pre"), "");
    if (v->pre.empty()) v->pre = "default";
    set_defaults(*v);
    v->add_space_prefix = f.get_bool(key("add_space_prefix"), v->add_space_prefix);
    v->remove_extra_whitespaces = f.get_bool(key("remove_extra_whitespaces"), v->remove_extra_whitespaces);
    v->lowercase = f.get_bool(key("normalizer.lowercase"), v->lowercase);
    v->strip_accents = f.get_bool(key("normalizer.strip_accents"), v->lowercase);

    load_tokens(*v, f);
    if (v->type == VocabType::BPE) load_merges(*v, f);
    load_special_ids(*v, f);
    detect_by_text(*v);
    build_eog(*v);
    render_harmony_markers(*v);
    build_special_cache(*v);
    fix_attributes(*v, f);
    find_newline(*v);
    v->pieces.resize(v->tokens.size());
    for (size_t i = 0; i < v->tokens.size(); ++i) v->pieces[i] = detail::render_piece(*v, Token(i));
    return Vocab(std::move(v));
}

Vocab Vocab::from_file(const std::string& path) {
    auto file = ggml::gguf::File::open(path);
    return from_gguf(*file);
}

}  // namespace engine
