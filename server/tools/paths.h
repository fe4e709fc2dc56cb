// Paths as llama-server's tools take them: a leading `~` (alone or before '/') is $HOME, a relative path
// is relative to the call's working directory (x-tool-cwd, else the server's), "." and ".." are folded.
#pragma once

#include <string>

namespace tools {

std::string expand_home(const std::string& path);
// Absolute, normalized path of `path` for a call whose working directory is `cwd` ("" = the server's).
std::string resolve_path(const std::string& path, const std::string& cwd);

}  // namespace tools
