// LoRA adapters over HTTP, as llama-server serves them: GET /lora-adapters lists the loaded adapters, their
// current scales and the task name and prompt prefix their files carry, POST /lora-adapters sets the scales
// (adapters not named get 0), and a request's "lora" field sets them for that request alone (an empty list
// sets nothing: the server's scales apply, as in llama-server since 2025). The adapters themselves are
// applied per token in the graph (engine/model/lora.h), so requests with different scales share batches.
#include "server/api/api.h"
#include "server/http/errors.h"

#include <cmath>

namespace api {

namespace {

// [{id, scale}, ...] -> one scale per adapter (0 for those not named; an entry without a scale gives 0,
// as llama-server reads it). An unknown id is a 400 where llama-server ignores it: a typo should not
// silently run the base model.
std::vector<float> parse_lora_list(const json& list, size_t n_adapters, const char* what) {
    if (!list.is_array()) bad_request(std::string(what) + " must be an array of {\"id\", \"scale\"} objects");
    std::vector<float> scales(n_adapters, 0.0f);
    for (const auto& e : list) {
        if (!e.is_object()) bad_request(std::string(what) + " must be an array of {\"id\", \"scale\"} objects");
        const json* id = field(e, "id");
        const json* scale = field(e, "scale");
        if (!id || !id->is_number_integer()) bad_request(std::string(what) + ": each entry needs an integer \"id\"");
        if (scale && !scale->is_number()) bad_request(std::string(what) + ": \"scale\" must be a number");
        const int64_t i = id->get<int64_t>();
        if (i < 0 || (size_t)i >= n_adapters)
            bad_request(std::string(what) + ": adapter id " + std::to_string(i) + " does not exist (" +
                        std::to_string(n_adapters) + " loaded)");
        const double v = scale ? scale->get<double>() : 0.0;
        if (!std::isfinite(v)) bad_request(std::string(what) + ": scale must be finite");
        scales[(size_t)i] = (float)v;
    }
    return scales;
}

}  // namespace

json Api::lora_json(const std::vector<float>& scales) {
    json out = json::array();
    for (size_t i = 0; i < scales.size(); ++i) out.push_back({{"id", i}, {"scale", scales[i]}});
    return out;
}

std::vector<float> Api::request_lora(const json& body) const {
    if (const json* l = field(body, "lora"); l && !(l->is_array() && l->empty()))
        return parse_lora_list(*l, config_.lora_paths.size(), "'lora'");
    std::lock_guard<std::mutex> lk(defaults_mu_);
    return config_.lora_scales;
}

Api::Reply Api::lora_adapters_get(Request&) {
    require_ready();
    json out = json::array();
    std::lock_guard<std::mutex> lk(defaults_mu_);
    for (size_t i = 0; i < config_.lora_paths.size(); ++i)
        out.push_back({{"id", i},
                       {"path", config_.lora_paths[i]},
                       {"scale", config_.lora_scales[i]},
                       {"task_name", i < lora_metadata_.size() ? lora_metadata_[i].task_name : ""},
                       {"prompt_prefix", i < lora_metadata_.size() ? lora_metadata_[i].prompt_prefix : ""}});
    return server::http::Response::json(out);
}

Api::Reply Api::lora_adapters_post(Request& req) {
    require_ready();
    const json body = parse_body(req, "lora_adapters.json");
    std::vector<float> scales = parse_lora_list(body, config_.lora_paths.size(), "the body");
    std::lock_guard<std::mutex> lk(defaults_mu_);
    config_.lora_scales = std::move(scales);
    return server::http::Response::json({{"success", true}});
}

}  // namespace api
