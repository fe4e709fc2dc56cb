// exec_shell_command (`sh -c COMMAND`: running a shell is what this tool is) and get_info. Both run
// their program through the call's ToolIo (run_process on this host: own process group, output cap,
// deadline, SIGKILL of the group; an isolate adds its own `timeout`).
#include <algorithm>

#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

namespace {
constexpr long long kExecDefaultTimeout = 10;  // seconds
constexpr long long kExecMaxTimeout = 60;
constexpr long long kExecMaxOutput = 16 * 1024;  // bytes
constexpr auto kInfoTimeout = std::chrono::seconds(5);

// The directory commands start in: x-tool-cwd (resolved like a path), else the runtime's own.
std::string command_cwd(const CallContext& ctx) { return ctx.cwd.empty() ? "" : ctx.io->resolve(ctx.cwd, ""); }

std::string exit_note(const ProcessResult& r) {
    std::string text = "\n[exit code: " + std::to_string(r.exit_code) + "]";
    if (r.timed_out) text += " [exit due to timed out]";
    return text;
}
}  // namespace

Tool exec_shell_command_tool() {
    Tool t;
    t.name = "exec_shell_command";
    t.display_name = "Execute shell command";
    t.write = true;
    t.definition = function_definition(
        t.name, "Run a shell command and return what it printed (stdout and stderr together) and its exit code.",
        {{"command", param("string", "The shell command")},
         {"timeout", param("integer", "Seconds before it is killed (default 10, at most 60)")},
         {"max_output_size", param("integer", "Most bytes of output returned (default and at most 16384)")}},
        {"command"});
    t.streams = true;
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        ProcessOptions po;
        po.cwd = command_cwd(ctx);
        po.timeout = std::chrono::seconds(std::clamp(params.value("timeout", kExecDefaultTimeout), 0LL, kExecMaxTimeout));
        po.max_output = (size_t)std::clamp(params.value("max_output_size", kExecMaxOutput), 0LL, kExecMaxOutput);
        po.cancelled = ctx.cancelled;
        po.on_output = ctx.on_output;
        const ProcessResult r = ctx.io->run({"sh", "-c", params["command"].get<std::string>()}, po);
        if (ctx.on_output) {
            // Streamed: the output went out as it came; the rest follows it.
            if (r.cancelled) return json();
            std::string tail;
            if (!r.spawn_error.empty()) tail = "failed to spawn process: " + r.spawn_error;
            if (r.truncated) tail += "\n[output truncated]";
            ctx.on_output(tail + exit_note(r));
            return json();
        }
        std::string text = r.spawn_error.empty() ? r.output : "failed to spawn process: " + r.spawn_error;
        if (r.truncated) text += "\n[output truncated]";
        return {{"plain_text_response", text + exit_note(r)}};
    };
    return t;
}

Tool get_info_tool() {
    Tool t;
    t.name = "get_info";
    t.display_name = "Get Runtime Info";
    t.write = false;
    t.definition = {{"type", "function"},
                    {"function",
                     {{"name", t.name},
                      {"description", "Tell the operating system (name and version) and the current working directory"},
                      {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}};
    t.invoke = [](const json&, const CallContext& ctx) -> json {
        ProcessOptions po;
        po.cwd = command_cwd(ctx);
        po.timeout = kInfoTimeout;
        po.max_output = 4096;
        const ProcessResult r = ctx.io->run({"uname", "-a"}, po);
        const bool ok = r.spawn_error.empty() && r.exit_code == 0 && !r.timed_out;
        std::string cwd = command_cwd(ctx);
        if (cwd.empty()) cwd = ctx.io->default_cwd();
        return {{"os", ok ? trimmed_output(r.output) : "unknown"}, {"cwd", cwd}};
    };
    return t;
}

}  // namespace tools
