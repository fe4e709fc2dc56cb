#include "engine/tokenizer/pretokenizer.h"

#include "engine/tokenizer/unicode.h"

namespace engine {

namespace {

// The patterns, as the upstream tokenizer.json files define them, with case-insensitive groups
// spelled out ('[sS]') the way llama.cpp writes them.
constexpr std::string_view kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr std::string_view kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kJais2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re";
constexpr std::string_view kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kQwen35 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kMiniCpm5 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kUfakzeka =
    R"re([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kSeedCoder =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kBailing =
    R"re('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re";
constexpr std::string_view kExaoneMoe =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re";
// Upper-then-lower letter runs, written with lookaheads: "letter and not a-z" / "letter and not A-Z".
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kTinyAya =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kDeepseek3 =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Cased letters (Lu, Ll, Lt); code points that Unicode normalization would change are escaped.
constexpr std::string_view kDeepseekLlmLetters =
    R"re(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)re";
constexpr std::string_view kCjk = R"re([一-龥ࠀ-一가-퟿]+)re";
constexpr std::string_view kPoro = R"re( ?[^(\s|.,!?…。，、।۔،)]+)re";
constexpr std::string_view kDefaultPunct = R"re([\p{P}\$\+<=>\^~\|]+)re";

const std::vector<PreTokenizerSpec>& specs() {
    static const std::vector<PreTokenizerSpec> table = [] {
        std::vector<PreTokenizerSpec> t;
        auto row = [&](std::vector<std::string_view> names, std::vector<std::string_view> regexes) -> auto& {
            t.push_back({std::move(names), std::move(regexes)});
            return t.back();
        };
        row({"default"}, {kDefaultPunct, kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"});
        {
            auto& r = row({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                           "lfm2", "jina-v5-nano"},
                          {kLlama3});
            r.ignore_merges = true;
            r.add_bos = true;
        }
        row({"dbrx", "smaug-bpe"}, {kLlama3});
        row({"jais-2"}, {kJais2});
        row({"glm4", "chatglm-bpe"}, {kLlama3}).no_bos = true;
        row({"deepseek-llm"}, {"[\\r\\n]", kDeepseekLlmLetters, R"re(\s?[!-/:-~！-／：-～‘-‟　-。]+)re",
                               R"re(\s+$)re", kCjk, R"re(\p{N}+)re"})
            .clean_spaces = false;
        row({"deepseek-coder"}, {"[\\r\\n]", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kCjk, R"re(\p{N})re"})
            .clean_spaces = false;
        row({"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
            {R"re(\p{N}{1,3})re", "[一-龥぀-ゟ゠-ヿ]+", kDeepseek3})
            .clean_spaces = false;
        row({"falcon"}, {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"});
        row({"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"}, {R"re(\p{N})re", kGpt2});
        row({"command-r", "smollm"}, {R"re(\p{N})re", kGpt2}).clean_spaces = false;
        row({"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
             "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais"},
            {kGpt2});
        row({"jina-v1-en", "jina-v2-code", "roberta-bpe"}, {kGpt2}).add_sep = true;
        row({"trillion", "granite-docling"}, {kGpt2}).clean_spaces = false;
        row({"stablelm2", "megrez"}, {kQwen2});
        row({"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"}, {kQwen2})
            .clean_spaces = false;
        row({"qwen35"}, {kQwen35}).clean_spaces = false;
        row({"bloom", "gpt3-finnish"}, {kPoro});
        row({"poro-chat"}, {kPoro}).clean_spaces = false;
        row({"viking"}, {kPoro, R"re(\p{N})re"}).clean_spaces = false;
        {
            auto& r = row({"tekken"}, {kTekken});
            r.clean_spaces = false;
            r.ignore_merges = true;
            r.add_bos = true;
        }
        {
            auto& r = row({"chameleon"},
                          {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
                           R"re(\p{N})re", R"re([\p{P}!-/:-@\[-`{-~])re", kGpt2});
            r.clean_spaces = false;
            r.add_bos = true;
        }
        row({"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {kGpt4o}).clean_spaces = false;
        row({"tiny_aya", "cohere2moe"}, {R"re(\d{1,3}(?=(?:\d{3})*\b))re", kTinyAya}).clean_spaces = false;
        row({"superbpe"}, {R"re(\p{N}+)re", R"re((?=(\d{3})+(?!\d)))re"}).clean_spaces = false;
        row({"bailingmoe", "bailingmoe2", "llada-moe"}, {kBailing}).clean_spaces = false;
        row({"seed-coder"}, {kSeedCoder}).clean_spaces = false;
        row({"exaone-moe"}, {kExaoneMoe});
        row({"minicpm5"}, {R"re(\p{N}{1,3})re", kMiniCpm5}).ignore_merges = true;
        row({"ufakzeka"}, {kUfakzeka}).clean_spaces = false;
        return t;
    }();
    return table;
}

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) {
    if (name.empty()) name = "default";
    for (const auto& spec : specs())
        for (auto n : spec.names)
            if (n == name) return &spec;
    return nullptr;
}

PreTokenizer::PreTokenizer(const PreTokenizerSpec& spec) {
    for (auto r : spec.regexes) regexes_.emplace_back(r);
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    const std::vector<uint32_t> cps = unicode::decode_utf8(text);
    // Patterns without \p{..} see non-ASCII whitespace as U+000B, as llama.cpp's std::wregex path
    // does (so a class that names U+3000 does not match it, but \s does).
    std::vector<uint32_t> folded;
    std::vector<size_t> pieces{cps.size()}, next;
    for (const Regex& re : regexes_) {
        const uint32_t* src = cps.data();
        if (!re.uses_categories()) {
            if (folded.empty()) {
                folded = cps;
                for (auto& cp : folded)
                    if (cp > 0x7F && unicode::is_whitespace(cp)) cp = 0x0B;
            }
            src = folded.data();
        }
        next.clear();
        size_t start = 0;
        for (size_t len : pieces) {
            if (len > 0) re.split(src, start, start + len, next);
            start += len;
        }
        pieces.swap(next);
    }
    std::vector<std::string> words;
    words.reserve(pieces.size());
    size_t start = 0;
    std::string utf8;
    for (size_t len : pieces) {
        utf8.clear();
        for (size_t k = start; k < start + len; ++k) unicode::append_utf8(utf8, cps[k]);
        std::string word;
        for (char c : utf8) word += unicode::byte_to_unicode(uint8_t(c));
        words.push_back(std::move(word));
        start += len;
    }
    return words;
}

}  // namespace engine
