// The tools' I/O in an isolate that commands reach (llama-server's --tools-runtime and x-tool-runtime):
// `docker exec` / `podman exec` into a running container, or `ssh` to a host. Every operation is a POSIX
// command run there (sh, cat, head, wc, mkdir, dirname, find, timeout; git when present) with paths as
// arguments and contents on stdin, never spliced into a script. ssh hands its command to the remote
// shell as one string: every word is single-quoted for it. An isolate needs no path on this host; ssh is
// remoting, not isolation (the tools can do what the remote account can).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/tools/tool_io.h"

namespace tools {

struct RuntimeSpec {
    enum class Kind { spawn, container, ssh };
    Kind kind = Kind::spawn;
    std::string engine;  // "docker" or "podman" (spawn, container)
    std::string arg;     // the image (spawn), the container's id or name (container), [user@]host (ssh)
    std::string text;    // the spec as given
};

// "docker:IMAGE" / "podman:IMAGE" (a container the server starts from IMAGE and owns),
// "docker-container:ID" / "podman-container:ID" (a running container), "ssh:[USER@]HOST". Throws
// std::invalid_argument saying what is wrong: an unknown form, an empty image, or an id or host that is
// not made of letters, digits and . _ - (@ for ssh) or starts with '-' (it would become an option of
// docker or ssh: -oProxyCommand=... runs anything on this host).
RuntimeSpec parse_runtime_spec(const std::string& spec);

// `argv` as one string that a POSIX shell splits back into exactly `argv`.
std::string shell_quote_join(const std::vector<std::string>& argv);

// The I/O of a running container or an ssh host (a `spawn` spec throws std::invalid_argument: the
// container must be started first, see tools_runtime.h).
std::unique_ptr<ToolIo> make_isolate_io(const RuntimeSpec& spec);

}  // namespace tools
