// The table of built-in tools, in llama-server's order. A new tool: its row function in a file of its
// family, one line here.
#include "server/tools/tool.h"

namespace tools {

const std::vector<Tool>& tool_table() {
    static const std::vector<Tool> table = {
        read_file_tool(),
        file_glob_search_tool(),
        grep_search_tool(),
        exec_shell_command_tool(),
        write_file_tool(),
        edit_file_tool(),
        get_datetime_tool(),
        get_info_tool(),
    };
    return table;
}

}  // namespace tools
