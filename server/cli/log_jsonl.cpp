#include "server/cli/log_jsonl.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace cli {

namespace {
const char* level_name(spdlog::level::level_enum l) {
    switch (l) {
        case spdlog::level::trace: return "trace";
        case spdlog::level::debug: return "debug";
        case spdlog::level::info: return "info";
        case spdlog::level::warn: return "warn";
        case spdlog::level::err: return "error";
        case spdlog::level::critical: return "critical";
        default: return "none";
    }
}
}  // namespace

void JsonlLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
    nlohmann::ordered_json j;
    j["type"] = "log";
    j["level"] = level_name(msg.level);
    j["time"] = std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
    j["logger"] = std::string(msg.logger_name.data(), msg.logger_name.size());
    j["msg"] = std::string(msg.payload.data(), msg.payload.size());
    // A message may quote client input: invalid UTF-8 is replaced rather than thrown on.
    const std::string line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
}

std::unique_ptr<spdlog::formatter> JsonlLogFormatter::clone() const {
    return std::make_unique<JsonlLogFormatter>();
}

}  // namespace cli
