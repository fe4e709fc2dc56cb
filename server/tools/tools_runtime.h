// Where a server's built-in tools run (llama-server's --tools-runtime SPEC, isolate_io.h's forms): this
// host (no spec), a running container or an ssh host named by the spec, or a container the server starts
// from an image and owns. The owned container runs `sh` waiting on its stdin (`ENGINE run --rm -i`), so
// it lives exactly as long as the server holds that pipe open: it ends, and --rm removes it, when the
// server stops, even when the server is killed. A container that died is started again at the next call.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "server/tools/isolate_io.h"
#include "server/tools/piped_process.h"

namespace tools {

class ToolsRuntime {
  public:
    // "" = this host. Starts the container of a docker:IMAGE / podman:IMAGE spec (bounded by
    // `start_timeout`). Throws std::invalid_argument for a malformed spec and std::runtime_error when the
    // container cannot be started (with the engine's own message).
    explicit ToolsRuntime(const std::string& spec, std::chrono::seconds start_timeout = std::chrono::seconds(60));
    ~ToolsRuntime();  // closes the owned container's stdin and waits for it (a few seconds), then kills
    ToolsRuntime(const ToolsRuntime&) = delete;
    ToolsRuntime& operator=(const ToolsRuntime&) = delete;

    bool on_host() const { return spec_.empty(); }
    const std::string& spec() const { return spec_; }
    // The I/O of the next call (the owned container started again first if it died).
    std::shared_ptr<const ToolIo> io();
    // "docker-container:ID" of the owned container ("" for other runtimes).
    std::string container() const;

  private:
    void start_container();  // under mu_

    std::string spec_;
    RuntimeSpec parsed_;
    std::chrono::seconds start_timeout_;
    mutable std::mutex mu_;
    std::unique_ptr<PipedProcess> client_;  // `ENGINE run` holding the owned container
    std::string container_id_;
    std::shared_ptr<const ToolIo> io_;
};

}  // namespace tools
