#include "server/http/request_schemas.h"

#include <map>

#include "server/http/embedded_schemas.h"
#include "server/http/errors.h"
#include "server/http/json_depth.h"

namespace server::http {

static std::string file_name(std::string_view name) {
    std::string out(name);
    if (out.size() < 5 || out.compare(out.size() - 5, 5, ".json") != 0) out += ".json";
    return out;
}

std::vector<std::string> request_schema_names() {
    std::vector<std::string> out;
    for (const auto& f : embedded::schema_files()) out.emplace_back(f.name);
    return out;
}

std::optional<std::string_view> request_schema_text(std::string_view name) {
    std::string wanted = file_name(name);
    for (const auto& f : embedded::schema_files()) {
        if (f.name == wanted) return f.text;
    }
    return std::nullopt;
}

const JsonSchemaValidator& request_schemas() {
    // A broken embedded schema is a build defect: failing loudly at first use is what we want.
    static const JsonSchemaValidator validator = [] {
        std::map<std::string, nlohmann::json> docs;
        for (const auto& f : embedded::schema_files()) docs.emplace(f.name, nlohmann::json::parse(f.text));
        return JsonSchemaValidator(std::move(docs));
    }();
    return validator;
}

std::optional<ValidationError> validate_request(std::string_view schema, const nlohmann::json& body) {
    return request_schemas().validate(file_name(schema), body);
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; clients need only the rest.
static std::string strip_exception_id(std::string message) {
    if (!message.empty() && message.front() == '[') {
        if (auto end = message.find("] "); end != std::string::npos) message.erase(0, end + 2);
    }
    return message;
}

nlohmann::json parse_request_body(const Request& req, std::string_view schema) {
    nlohmann::json body;
    if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) {
        body = nlohmann::json::object();
    } else {
        if (auto at = json_depth_exceeded(req.body)) {
            throw HttpError(400, "request body nests arrays and objects deeper than the limit of " +
                                     std::to_string(kMaxJsonDepth) + " levels (at byte " + std::to_string(*at) +
                                     ")");
        }
        try {
            body = nlohmann::json::parse(req.body);
        } catch (const nlohmann::json::exception& e) {
            throw HttpError(400, "invalid JSON in request body: " + strip_exception_id(e.what()));
        }
    }
    if (auto error = validate_request(schema, body)) throw HttpError(400, error->to_string());
    return body;
}

}  // namespace server::http
