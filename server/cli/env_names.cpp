// The one table of environment variable names that differ from LLAMA_ARG_<LONG_NAME>. The names are
// llama-server's (its --help lists them as "(env: ...)"), so that a deployment configured for
// llama-server by environment configures ggserve the same way.
#include "server/cli/env_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace cli {

namespace {

const std::map<std::string, std::vector<std::string>>& table() {
    static const std::map<std::string, std::vector<std::string>> t = {
        // model and context
        {"batch-size", {"LLAMA_ARG_BATCH"}},
        {"ubatch-size", {"LLAMA_ARG_UBATCH"}},
        {"n-predict", {"LLAMA_ARG_N_PREDICT"}},
        {"predict", {"LLAMA_ARG_N_PREDICT"}},
        {"parallel", {"LLAMA_ARG_N_PARALLEL"}},
        {"model-draft", {"LLAMA_ARG_MODEL_DRAFT", "LLAMA_ARG_SPEC_DRAFT_MODEL"}},
        {"draft-max", {"LLAMA_ARG_DRAFT_MAX", "LLAMA_ARG_SPEC_DRAFT_N_MAX"}},
        {"draft", {"LLAMA_ARG_DRAFT_MAX"}},
        {"draft-n", {"LLAMA_ARG_DRAFT_MAX"}},
        {"draft-min", {"LLAMA_ARG_DRAFT_MIN", "LLAMA_ARG_SPEC_DRAFT_N_MIN"}},
        {"draft-p-min", {"LLAMA_ARG_DRAFT_P_MIN", "LLAMA_ARG_SPEC_DRAFT_P_MIN"}},
        {"cache-type-k-draft", {"LLAMA_ARG_CACHE_TYPE_K_DRAFT", "LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_K"}},
        {"cache-type-v-draft", {"LLAMA_ARG_CACHE_TYPE_V_DRAFT", "LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_V"}},
        {"spec-draft-type-k", {"LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_K"}},
        {"spec-draft-type-v", {"LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_V"}},
        {"hf-repo-draft", {"LLAMA_ARG_HF_REPO_DRAFT", "LLAMA_ARG_SPEC_DRAFT_HF_REPO"}},
        {"cpu-moe-draft", {"LLAMA_ARG_CPU_MOE_DRAFT", "LLAMA_ARG_SPEC_DRAFT_CPU_MOE"}},
        {"n-cpu-moe-draft", {"LLAMA_ARG_N_CPU_MOE_DRAFT", "LLAMA_ARG_SPEC_DRAFT_N_CPU_MOE"}},
        {"ctx-size-draft", {"LLAMA_ARG_CTX_SIZE_DRAFT"}},
        {"gpu-layers-draft", {"LLAMA_ARG_N_GPU_LAYERS_DRAFT", "LLAMA_ARG_GPU_LAYERS_DRAFT"}},
        {"gpu-layers", {"LLAMA_ARG_N_GPU_LAYERS"}},
        {"no-kv-offload", {"LLAMA_ARG_NO_KV_OFFLOAD"}},
        {"rope-scaling", {"LLAMA_ARG_ROPE_SCALING_TYPE"}},
        {"defrag-thold", {"LLAMA_ARG_DEFRAG_THOLD"}},
        {"checkpoint-every-n-tokens", {"LLAMA_ARG_CHECKPOINT_EVERY_NT"}},
        {"checkpoint-min-step", {"LLAMA_ARG_CHECKPOINT_MIN_SPACING_NT", "LLAMA_ARG_CHECKPOINT_MIN_STEP"}},
        // sampling
        {"temp", {"LLAMA_ARG_TEMPERATURE"}},
        // chat
        {"reasoning-format", {"LLAMA_ARG_THINK"}},
        {"reasoning-budget", {"LLAMA_ARG_THINK_BUDGET"}},
        {"reasoning-budget-message", {"LLAMA_ARG_THINK_BUDGET_MESSAGE"}},
        {"webui", {"LLAMA_ARG_UI"}},
        // server endpoints
        {"metrics", {"LLAMA_ARG_ENDPOINT_METRICS"}},
        {"slots", {"LLAMA_ARG_ENDPOINT_SLOTS"}},
        {"no-slots", {"LLAMA_ARG_NO_ENDPOINT_SLOTS"}},
        {"props", {"LLAMA_ARG_ENDPOINT_PROPS"}},
        {"api-key", {"LLAMA_API_KEY"}},
        {"path", {"LLAMA_ARG_STATIC_PATH"}},
        {"embedding", {"LLAMA_ARG_EMBEDDINGS"}},
        {"embeddings", {"LLAMA_ARG_EMBEDDINGS"}},
        // logging
        {"log-colors", {"LLAMA_ARG_LOG_COLORS", "LLAMA_LOG_COLORS"}},
        {"log-verbosity", {"LLAMA_ARG_LOG_VERBOSITY", "LLAMA_LOG_VERBOSITY"}},
        {"verbosity", {"LLAMA_ARG_LOG_VERBOSITY", "LLAMA_LOG_VERBOSITY"}},
        {"log-prefix", {"LLAMA_ARG_LOG_PREFIX", "LLAMA_LOG_PREFIX"}},
        {"log-timestamps", {"LLAMA_ARG_LOG_TIMESTAMPS", "LLAMA_LOG_TIMESTAMPS"}},
        {"offline", {"LLAMA_ARG_OFFLINE", "LLAMA_OFFLINE"}},
    };
    return t;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return s;
}

}  // namespace

std::string env_name(const std::string& long_name) { return env_names(long_name).front(); }

std::vector<std::string> env_names(const std::string& long_name) {
    if (auto it = table().find(long_name); it != table().end()) return it->second;
    std::string out = "LLAMA_ARG_";
    for (const char c : long_name) out += c == '-' ? '_' : (char)std::toupper((unsigned char)c);
    return {out};
}

std::vector<std::string> option_env_names(const std::vector<std::string>& long_names) {
    std::vector<std::string> out;
    for (size_t i = 0; i < long_names.size(); ++i) {
        // The first long name gives the rule's name; later ones (older or newer spellings) only the names the
        // table gives them, so that an alias never claims a variable nobody uses.
        if (i > 0 && !table().count(long_names[i])) continue;
        for (const auto& n : env_names(long_names[i]))
            if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
}

bool parse_env_bool(const std::string& value, bool* out) {
    const std::string v = lower(value);
    if (v == "1" || v == "true" || v == "enabled" || v == "on") return *out = true, true;
    if (v == "0" || v == "false" || v == "disabled" || v == "off") return *out = false, true;
    return false;
}

}  // namespace cli
