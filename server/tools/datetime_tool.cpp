// get_datetime: the current date and time in UTC, formatted by strftime (the server's clock, whatever
// the tools runtime).
#include <chrono>
#include <ctime>

#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

Tool get_datetime_tool() {
    Tool t;
    t.name = "get_datetime";
    t.display_name = "Get Date & Time";
    t.write = false;
    t.uses_cwd = false;
    t.definition = function_definition(
        t.name, "Tell the current date and time in UTC",
        {{"format", param("string",
                          "strftime() format of the answer (default \"%Y-%m-%dT%H:%M:%SZ\", ISO 8601); for "
                          "example \"%A, %B %d %Y\" for a date people read")}},
        json::array());
    t.invoke = [](const json& params, const CallContext&) -> json {
        const std::string format = params.value("format", std::string("%Y-%m-%dT%H:%M:%SZ"));
        const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
        std::tm utc{};
        gmtime_r(&now, &utc);
        char buf[256];
        // 0: the format is empty or its answer does not fit (strftime cannot tell which).
        const size_t n = format.empty() ? 0 : std::strftime(buf, sizeof buf, format.c_str(), &utc);
        if (n == 0) return {{"error", "invalid format string"}};
        return {{"result", std::string(buf, n)}};
    };
    return t;
}

}  // namespace tools
