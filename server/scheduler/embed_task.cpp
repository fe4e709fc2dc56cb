#include "server/scheduler/embed_task.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "engine/model/embeddings.h"

namespace sched {

void EmbedQueue::push(std::shared_ptr<EmbedTask> t) {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(t));
}

bool EmbedQueue::empty() const {
    std::lock_guard<std::mutex> lk(mu_);
    return queue_.empty();
}

std::deque<std::shared_ptr<EmbedTask>> EmbedQueue::take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::deque<std::shared_ptr<EmbedTask>> out;
    out.swap(queue_);
    return out;
}

void EmbedQueue::put_back(std::deque<std::shared_ptr<EmbedTask>> tasks) {
    std::lock_guard<std::mutex> lk(mu_);
    tasks.insert(tasks.end(), queue_.begin(), queue_.end());
    queue_.swap(tasks);
}

void EmbedQueue::run(engine::Context& ctx, const std::vector<engine::SeqId>& seqs,
                     const std::function<void(const Work&)>& account) {
    if (seqs.empty()) return;
    // Tasks with the same pooling and normalization are embedded in one call (their inputs share
    // micro-batches); each task gets its own slice of the result.
    std::map<std::pair<int, int>, std::vector<std::shared_ptr<EmbedTask>>> groups;
    for (auto& t : take()) {
        if (t->cancelled.load()) continue;
        groups[{(int)t->pooling, t->normalize}].push_back(std::move(t));
    }
    // A model that generates (an output matrix) hands out its final hidden states for these calls only.
    struct HiddenStates {
        engine::Context& ctx;
        const bool was = ctx.params().embeddings;
        ~HiddenStates() { ctx.set_embeddings(was); }
    } hidden{ctx};
    ctx.set_embeddings(true);
    for (auto& [key, tasks] : groups) {
        std::vector<std::vector<engine::Token>> inputs;
        for (const auto& t : tasks) inputs.insert(inputs.end(), t->inputs.begin(), t->inputs.end());
        Work work;
        const auto t0 = std::chrono::steady_clock::now();
        engine::EmbedOptions opts{(engine::Pooling)key.first, key.second, seqs, &work.decode_calls};
        EmbedResult failed;
        std::vector<std::vector<std::vector<float>>> all;
        try {
            all = engine::embed(ctx, inputs, opts);
        } catch (const engine::InvalidBatch& e) {
            failed = {400, e.what(), {}};
        } catch (const std::invalid_argument& e) {
            failed = {400, e.what(), {}};
        } catch (const std::exception& e) {
            spdlog::error("embedding failed: {}", e.what());
            failed = {500, e.what(), {}};
        }
        work.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        work.inputs = inputs.size();
        for (const auto& in : inputs) {
            work.tokens += in.size();
            work.longest = std::max(work.longest, in.size());
        }
        if (account) account(work);  // before the replies: a client that saw its reply sees it counted
        size_t next = 0;
        for (const auto& t : tasks) {
            EmbedResult r = failed;
            if (failed.status == 200)
                for (size_t i = 0; i < t->inputs.size(); ++i) r.vectors.push_back(std::move(all[next++]));
            t->done(std::move(r));
        }
    }
}

void EmbedQueue::fail_all(int status, const std::string& message) {
    for (auto& t : take()) t->done(EmbedResult{status, message, {}});
}

}  // namespace sched
