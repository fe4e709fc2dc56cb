// Embedding requests on the engine thread: the API layer queues an EmbedTask (already tokenized and
// validated); between iterations the scheduler hands the queue the sequence ids of its idle, empty
// slots, and every queued task's inputs are embedded together (engine::embed packs them into
// micro-batches), so many short inputs, of one request or several, share decode calls.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/pooling.h"

namespace sched {

struct EmbedResult {
    int status = 200;  // HTTP-like: 200, or 400/500/503 with error
    std::string error;
    // Per input: one pooled vector, or one row per token (pooling none).
    std::vector<std::vector<std::vector<float>>> vectors;
};

struct EmbedTask {
    std::vector<std::vector<engine::Token>> inputs;
    engine::Pooling pooling = engine::Pooling::Unspecified;
    int normalize = 2;
    // Called once on the engine thread; must not block.
    std::function<void(EmbedResult&&)> done;
    std::atomic<bool> cancelled{false};
};

class EmbedQueue {
  public:
    void push(std::shared_ptr<EmbedTask> t);
    bool empty() const;
    // Engine thread: embeds every queued task using the sequence ids seqs (each holding no cells); does
    // nothing when seqs is empty (the tasks wait). The context gives hidden states during the calls
    // only, so a server that also generates gets its logits back afterwards.
    // `account` hears what each embedding call did (for the metrics) before its tasks are answered.
    struct Work {
        size_t inputs = 0, tokens = 0, longest = 0, decode_calls = 0;
        double seconds = 0.0;
    };
    void run(engine::Context& ctx, const std::vector<engine::SeqId>& seqs,
             const std::function<void(const Work&)>& account = {});
    // Engine thread, at shutdown: fails what is left.
    void fail_all(int status, const std::string& message);
    // Engine thread: the queued tasks, oldest first (the queue is then empty); tasks not served go back to
    // its front with put_back, in the same order.
    std::deque<std::shared_ptr<EmbedTask>> take();
    void put_back(std::deque<std::shared_ptr<EmbedTask>> tasks);

  private:
    mutable std::mutex mu_;
    std::deque<std::shared_ptr<EmbedTask>> queue_;
};

}  // namespace sched
