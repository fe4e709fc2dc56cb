// Realtime reasoning control (llama-server's `reasoning_control` request field and POST
// /v1/chat/completions/control): a chat request that arms it can be told, while it runs, to end its
// reasoning block now; the reply then gets the closing tag and goes on with its answer. The signal
// is shared with the request's samplers (engine::ReasoningBudget), which own it: once the request is
// done its entry expires, and a control for it (or for an id never seen) changes nothing.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace api {

class ReasoningControls {
  public:
    // The end signal of the reply `id`, registered for end().
    std::shared_ptr<std::atomic<bool>> arm(const std::string& id);
    // Asks the running reply `id` to end its reasoning; false when no running reply has that id.
    bool end(const std::string& id);
    std::size_t size() const;  // entries kept, expired ones included until the next prune

  private:
    mutable std::mutex mu_;
    std::unordered_map<std::string, std::weak_ptr<std::atomic<bool>>> armed_;
    std::size_t prune_at_ = 64;
};

}  // namespace api
