// One agent tool: a built-in one (llama-server's `--tools`), a row of the tool table (tool_table.cpp), or
// an MCP server's (mcp_servers.h, made at startup). A row is
// its name, how the chat UI shows it, whether it writes, whether it reads the working directory, its
// OpenAI function definition and the function that runs it. Adding a tool is a new file with its row
// function plus one line in the table.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "server/tools/tool_io.h"

namespace tools {

// What a call knows besides its parameters (llama-server takes these from request headers).
struct CallContext {
    std::string cwd;      // x-tool-cwd: relative paths and commands start here; "" = the server's directory
    bool base64 = false;  // x-resp-type: base64 (read_file answers the whole file, base64-encoded)
    // True once the client has gone away: a running command is killed.
    std::function<bool()> cancelled;
    // Where the call's files and commands are (--tools-runtime, x-tool-runtime): this host by default.
    std::shared_ptr<const ToolIo> io = host_io_shared();
    // A streamed call (POST /tools with "stream": true, tools with `streams`): output goes here as it
    // comes (returning false: the client is gone) and invoke's result is not used.
    std::function<bool(std::string_view)> on_output;
};

struct Tool {
    std::string name;          // "read_file"
    std::string display_name;  // "Read file"
    bool write = false;        // permissions.write: it changes files or runs commands
    bool uses_cwd = true;
    std::string type = "builtin";  // GET /tools' "type": "builtin", or "mcp" for an MCP server's tool
    bool check_schema = true;      // POST /tools checks the parameters (check_params) before invoke
    bool streams = false;          // can answer "stream": true (CallContext::on_output)
    // {"type": "function", "function": {"name", "description", "parameters"}}; the parameters' schema is
    // also what check_params validates a call against.
    nlohmann::json definition;
    // Runs the call with parameters that passed check_params. Failures the model should see are a
    // {"error": "..."} result, as llama-server answers them (HTTP 200).
    std::function<nlohmann::json(const nlohmann::json& params, const CallContext& ctx)> invoke;

    // GET /tools' entry: {display_name, tool, type, permissions: {write}, uses_cwd, definition}.
    nlohmann::json to_json() const;
};

// A call's parameters do not fit the tool's schema (a missing required one, a wrong type): a 400.
struct ParamError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Checks `params` against the tool definition's parameter schema (type, required, properties, items;
// properties the schema does not name are ignored, as llama-server ignores them). Throws ParamError
// naming the parameter ("edits[1].new_text").
void check_params(const Tool& tool, const nlohmann::json& params);

// Shorthand for a definition: {"type": "function", "function": {name, description, parameters}}.
nlohmann::json function_definition(const std::string& name, const std::string& description,
                                   nlohmann::json properties, nlohmann::json required);
// {"type": T, "description": D}
nlohmann::json param(const char* type, const std::string& description);

// The rows, in llama-server's order (tool_table.cpp).
const std::vector<Tool>& tool_table();

// The rows of each family (one file each).
Tool read_file_tool();          // file_tools.cpp
Tool write_file_tool();         // file_tools.cpp
Tool edit_file_tool();          // edit_file.cpp
Tool file_glob_search_tool();   // search_tools.cpp
Tool grep_search_tool();        // search_tools.cpp
Tool exec_shell_command_tool(); // shell_tools.cpp
Tool get_info_tool();           // shell_tools.cpp
Tool get_datetime_tool();       // datetime_tool.cpp

}  // namespace tools
