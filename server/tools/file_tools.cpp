// read_file and write_file.
#include <sstream>

#include "server/tools/file_io.h"
#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

namespace {
constexpr size_t kReadMax = 16 * 1024;           // text answer, and a whole file read without a range
constexpr size_t kReadMaxBase64 = 32u << 20;     // x-resp-type: base64
constexpr size_t kReadRangeMax = 256u << 20;     // bytes scanned for a line range
}  // namespace

Tool read_file_tool() {
    Tool t;
    t.name = "read_file";
    t.display_name = "Read file";
    t.write = false;
    t.definition = function_definition(
        t.name,
        "Read the contents of a file. Optionally give a 1-based line range. With append_loc, each line "
        "starts with its line number and an arrow (\"1\u2192...\").",
        {{"path", param("string", "Path of the file")},
         {"start_line", param("integer", "First line to read, 1-based (default 1)")},
         {"end_line", param("integer", "Last line to read, 1-based and included (default: the last line)")},
         {"append_loc", param("boolean", "Start each line with its line number")}},
        {"path"});
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        const std::string path = params["path"].get<std::string>();
        const long long start_line = params.value("start_line", 1LL);
        const long long end_line = params.value("end_line", -1LL);  // -1: to the end
        const bool append_loc = params.value("append_loc", false);
        const ToolIo& io = *ctx.io;
        const std::string full = io.resolve(path, ctx.cwd);
        const auto size = io.regular_file_size(full);
        if (!size) return {{"error", "cannot stat file: " + path}};
        if (ctx.base64) {
            if (*size > kReadMaxBase64)
                return {{"error", "file too large (" + std::to_string(*size) + " bytes, max " +
                                      std::to_string(kReadMaxBase64) + ")"}};
            const auto content = io.read_regular_file(full, kReadMaxBase64);
            if (!content) return {{"error", "failed to open file: " + path}};
            return {{"base64", base64_encode(*content)}, {"size_bytes", content->size()}};
        }
        if (*size > kReadMax && end_line == -1)
            return {{"error", "file too large (" + std::to_string(*size) + " bytes, max " + std::to_string(kReadMax) +
                                  "). Use start_line/end_line to read a portion."}};
        const auto content = io.read_regular_file(full, kReadRangeMax);
        if (!content) return {{"error", "failed to open file: " + path}};
        std::istringstream in(*content);
        std::string line, result;
        long long n = 0;
        while (std::getline(in, line)) {
            ++n;
            if (n < start_line) continue;
            if (end_line != -1 && n > end_line) break;
            std::string out = append_loc ? std::to_string(n) + "\u2192" + line + "\n" : line + "\n";
            if (result.size() + out.size() > kReadMax) {
                result += "[output truncated]";
                break;
            }
            result += out;
        }
        return {{"plain_text_response", result}};
    };
    return t;
}

Tool write_file_tool() {
    Tool t;
    t.name = "write_file";
    t.display_name = "Write file";
    t.write = true;
    t.definition = function_definition(
        t.name,
        "Write content to a file, creating it (and its parent directories) if it does not exist. For "
        "changes to part of a file, use edit_file.",
        {{"path", param("string", "Path of the file to write")}, {"content", param("string", "Content to write")}},
        {"path", "content"});
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        const std::string path = params["path"].get<std::string>();
        const std::string content = params["content"].get<std::string>();
        if (!ctx.io->write_regular_file(ctx.io->resolve(path, ctx.cwd), content).empty())
            return {{"error", "failed to write file: " + path}};
        return {{"result", "file written successfully"}, {"path", path}, {"bytes", content.size()}};
    };
    return t;
}

}  // namespace tools
