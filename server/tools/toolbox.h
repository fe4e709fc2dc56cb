// The tools a server enables (`--tools LIST`, `-ag`) and the calls made to them, independent of HTTP.
#pragma once

#include <string>
#include <vector>

#include "server/tools/tool.h"

namespace tools {

class Toolbox {
  public:
    // `names`: "all" or tool names (llama-server's --tools list, already split at commas; empty items are
    // ignored). Throws std::invalid_argument naming an unknown tool and the available ones.
    explicit Toolbox(const std::vector<std::string>& names);
    // Splits a --tools value at commas, trimming blanks.
    static std::vector<std::string> split_list(const std::string& value);
    // Every tool's name, in table order ("read_file, file_glob_search, ...").
    static std::string available_names();

    bool empty() const { return tools_.empty(); }
    std::vector<std::string> names() const;
    // GET /tools: one entry per enabled tool.
    nlohmann::json list_json() const;
    // The enabled tool of that name, or nullptr.
    const Tool* find(const std::string& name) const;

  private:
    std::vector<const Tool*> tools_;
};

}  // namespace tools
