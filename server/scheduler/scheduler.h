// The engine thread: takes tasks from a queue, seats them in slots, plans each iteration
// (plan_iteration), runs one decode call for the combined batch, verifies and samples, and sends each
// step's tokens through the slot's TokenPipeline to the task's sink. HTTP threads only touch the queue
// (submit), the cancel flags and the snapshots; sinks only queue plain outputs (they format elsewhere).
#pragma once

#include <condition_variable>
#include <functional>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/speculative/draft_controller.h"
#include "engine/speculative/draft_model.h"
#include "engine/speculative/draft_model_cost.h"
#include "engine/speculative/lookahead.h"
#include "engine/speculative/ngram_cache.h"
#include "engine/speculative/streams_ahead.h"
#include "engine/speculative/verify.h"
#include "server/scheduler/embed_task.h"
#include "server/scheduler/host_prompt_cache.h"
#include "server/scheduler/metrics.h"
#include "server/scheduler/plan.h"
#include "server/scheduler/prompt_cache.h"
#include "server/scheduler/slot.h"
#include "server/scheduler/slot_action.h"
#include "server/scheduler/task.h"

namespace sched {

// Speculative decoding for the whole server (--spec-type, --draft-*); requests may lower or disable it.
struct SpecConfig {
    std::vector<engine::spec::DrafterType> types;  // priority order: the first non-empty draft wins
    int32_t n_max = 16;
    int32_t n_min = 0;
    float p_min = 0.75f;
    int32_t ngram_mod_n_match = 24;  // --spec-ngram-mod-n-match: ngram-mod's key length in tokens
    // --spec-ngram-{simple,map-k,map-k4v}-size-n/-m/-min-hits: key length in tokens (0: the drafter's
    // default), most tokens per draft (0: --draft-max), occurrences a key needs before it drafts (0: 1).
    struct NgramSizes {
        int32_t n = 0, m = 0, min_hits = 0;
    };
    NgramSizes ngram_simple, ngram_map_k, ngram_map_k4v;
    int32_t ngram_mod_n_min = 0, ngram_mod_n_max = 0;  // --spec-ngram-mod-n-min/-n-max (0: --draft-min/-max)
    // The most tokens a drafter of this type may propose (0: no cap of its own) and the fewest worth verifying.
    int32_t draft_cap(engine::spec::DrafterType t) const;
    int32_t draft_floor(engine::spec::DrafterType t) const;
    engine::spec::LookaheadParams lookahead;  // --lookahead-w/-n/-g
    bool lookahead_fixed = false;             // --lookahead-fixed: no adaptation, every step full size
    bool enabled() const { return !types.empty(); }
    bool has(engine::spec::DrafterType t) const {
        for (auto x : types)
            if (x == t) return true;
        return false;
    }
};

struct SchedulerConfig {
    int n_parallel = 1;
    // -kvu (llama-server's kv_unified): every slot may use the whole context instead of -c / -np cells. The
    // slots then share the cells: a prompt starts once its rest fits, and when the generating requests
    // need more cells than are free, the newest of them waits in host memory until there is room.
    bool shared_context = false;
    SpecConfig spec;
    engine::spec::DraftModel* draft_model = nullptr;  // needed when spec.types lists the draft model
    std::shared_ptr<engine::spec::NgramCacheStore> ngram_store;  // ngram-cache's shared levels
    uint32_t max_prefill_tokens = 0;  // 0: no cap
    // A slot that reaches its share of the context drops half of its tokens after the kept ones and
    // goes on (off: the request ends with finish_reason "length").
    bool context_shift = true;
    // --cache-reuse: after the common prefix, chunks of the slot's cache at least this long that the
    // prompt repeats further on are moved into place (KV shift) instead of evaluated again. 0: off.
    int32_t n_cache_reuse = 0;
    // -sps: a prompt goes to the idle slot whose cache it shares the largest fraction with, when that
    // fraction exceeds this; otherwise to an empty or the least recently used slot. 0: never by prompt.
    float slot_prompt_similarity = 0.1f;
    bool special = false;  // -sp: special tokens are shown as text in the output
    // -cram: the host-memory prompt cache's size in MiB (-1: no limit, 0: off; host_prompt_cache.h).
    // --sleep-idle-seconds: after this long without work the weights' and the KV cache's host memory go
    // back to the OS (and every cached prompt with them) until the next task; <= 0: never.
    int sleep_idle_seconds = -1;
    // Called on the engine thread after the server falls asleep (true) and after it wakes (false).
    std::function<void(bool asleep)> on_sleep_change;
    int64_t cache_ram_mib = 8192;
    // --cache-idle-slots: when a task is seated, the other idle slots' states go to the host-memory cache
    // and their cells are freed.
    bool cache_idle_slots = false;
};

class Scheduler {
  public:
    Scheduler(const engine::Model& model, engine::Context& ctx, SchedulerConfig config);
    ~Scheduler();

    // Starts the engine thread; with warm, it first runs warmup() and start() returns after it.
    void start(bool warm = false);
    void stop();

    // Queues a task (it starts when a slot is free).
    void submit(std::shared_ptr<Task> task);
    // Marks a task cancelled and wakes the engine thread so its slot is freed at once.
    void cancel(const std::shared_ptr<Task>& task);
    // Queues an embedding task (embed_task.h); it runs between iterations on idle slots' sequences.
    void submit_embed(std::shared_ptr<EmbedTask> task);
    // Queues a slot action; it runs once its slot is idle. action.slot must be < n_parallel().
    void submit_action(SlotAction action);

    std::vector<SlotInfo> slots_snapshot() const;
    const Metrics& metrics() const { return metrics_; }
    const SpecConfig& spec() const { return config_.spec; }
    const SchedulerConfig& config() const { return config_; }

    int n_parallel() const { return config_.n_parallel; }
    int32_t n_ctx_slot() const { return n_ctx_slot_; }
    // Idle slots and no queued task.
    bool idle() const;
    // Asleep after --sleep-idle-seconds without work (the next task wakes it).
    bool sleeping() const { return asleep_.load(); }

  private:
    // Evaluates a short batch (BOS, EOS) on sequence 0 and removes it again, before serving: the first
    // request then does not pay for first-touch page faults of the weights (llama-server's warmup).
    void warmup();
    void run();
    void run_embeddings();  // queued embedding requests, on idle slots, in decode calls of their own
    // --sleep-idle-seconds: forgets every cached prompt and gives the weights' and the KV cache's host pages
    // back; wake_up() brings the weights back before the next task (a failure fails the waiting requests).
    void go_to_sleep();
    bool wake_up();
    // Fails every queued request, slot action and embedding task (shutdown, a failed wake-up).
    void fail_waiting(int status, const std::string& why);
    // Sequence ids for embedding inputs: idle slots that hold nothing, then (evict) the least recently used
    // idle slots, whose prompts go to the host-memory prompt cache; at most `want`.
    std::vector<engine::SeqId> embedding_seqs(size_t want, bool evict);
    // Embedding tasks riding along a generation step's decode call (a server that generates and embeds).
    struct EmbedRide {
        std::deque<std::shared_ptr<EmbedTask>> tasks;
        std::vector<engine::SeqId> seqs;  // one per input, in task order
        std::vector<size_t> first_row;    // batch index of each input's first token
    };
    // Takes the queued embedding tasks, oldest first, whose inputs fit beside the step (n_free batch tokens,
    // idle slots); false if the oldest does not fit (then they run on their own, run_embeddings).
    bool ride_embeddings(uint32_t n_free, EmbedRide& ride);
    // After the step's decode: each riding task's vectors from its tokens' hidden states.
    void finish_ride(EmbedRide& ride);
    void seat_tasks();
    void run_actions();
    SlotActionResult do_action(Slot& slot, const SlotAction& action);
    void refuse_slot_files_with_control_vectors(int32_t slot) const;
    std::vector<SlotCacheView> cache_views() const;
    void start_task(Slot& slot, std::shared_ptr<Task> task);
    // --cache-reuse: moves matching chunks of the slot's old cache after the first n_past prompt tokens
    // into place; returns the prompt tokens now cached.
    int32_t reuse_cache_chunks(Slot& slot, const std::vector<engine::Token>& old_cache, int32_t n_past,
                               int32_t n_min);
    // Makes room in a full slot: keep n_keep tokens, drop half of the rest. False if nothing can go.
    bool shift_context(Slot& slot);
    // Empties the slot's sequence (after a failure its cache content is not trusted).
    void forget_cache(Slot& slot);
    // The slot's cache (tokens, LoRA scales, state bytes) for the host-memory cache, if it is worth keeping
    // there (else an entry with no state).
    HostPromptCache::Entry host_state_of(Slot& slot);
    // Keeps an entry host_state_of made (one with no state is ignored).
    void keep_in_host(HostPromptCache::Entry entry);
    // Loads the first m.n_prefix tokens of a host-memory state into the slot's sequence; false (the slot
    // unchanged) when the cache has no room for them.
    bool restore_from_host(Slot& slot, const HostPromptCache::Match& m);
    // An idle slot's cache goes to the host-memory cache (when it is worth keeping there) and its cells are freed.
    void evict_to_host(Slot& slot);
    // --cache-idle-slots: the idle slots other than `seated` go to the host-memory cache and are emptied.
    void cache_idle_slots(const Slot& seated);
    void publish_host_stats();
    // Decodes the batch; when the cache is full, drops idle slots' cached prompts and tries again.
    engine::Context::Status decode_with_eviction(const engine::Batch& batch);
    void drop_cancelled();
    // Shared context: brings preempted requests back (oldest first) when they fit, and frees a cell for
    // every generating slot's next token (idle slots' caches, then unfinished prompts, then the newest
    // generating requests, whose states wait in host memory).
    void make_room();
    uint32_t free_cells() const;
    // Frees cells until `need` are free, taking idle slots' cached prompts (least recently used first) and,
    // with take_prompts, the cells of unfinished prompts other than `keep`'s (newest first; they start
    // over). False if that is not enough.
    bool free_cells_for(uint32_t need, bool take_prompts, const Slot* keep);
    // A generating slot's sequence goes to host memory and its cells are freed; false (nothing changed)
    // when its state cannot be copied.
    bool swap_out(Slot& slot);
    // Puts a swapped-out sequence back; false (still swapped out) when the cache has no room for it.
    bool swap_in(Slot& slot);
    // Shared context: which prompt slots may evaluate a chunk now (their whole rest fits beside one cell
    // per generating slot; oldest first, and none while a preempted request waits).
    std::vector<bool> admitted_prompts() const;
    // Asks each generating slot's drafters for this step's draft (before the plan seats it).
    void prepare_drafts();
    int32_t draft_room(const Slot& slot) const;
    // A decode step gave the slot n_tokens: its pace (Slot::pace).
    void note_pace(Slot& slot, size_t n_tokens);
    // Scratch sequence ids for lookahead lanes: [n_parallel, n_seq_max) of the context.
    int32_t lookahead_lanes() const;
    // The request's lookahead settings (the server's, overridden by the task's).
    engine::spec::LookaheadParams lookahead_params(const Task& t) const;
    // Fits each lookahead step to what the plan granted and gives its lanes sequence ids.
    void fit_lookahead(std::vector<PlanEntry>& entries);
    // Removes the scratch lanes of the entries' lookahead steps from the cache.
    void clear_lanes(const std::vector<PlanEntry>& entries);
    void step_lookahead(Slot& slot, size_t first_row);
    bool run_iteration();
    // Evaluates the entries as one batch and hands each slot the logits rows it asked for. A batch that
    // fails is retried entry by entry (a draft is dropped first when the cache is full), so that only the
    // request whose entry fails is failed.
    void execute(const std::vector<PlanEntry>& entries, EmbedRide* ride = nullptr);
    // Removes what a failed decode may have left of the entries' tokens in their sequences.
    void rollback(const std::vector<PlanEntry>& entries);
    void record_decode(const std::vector<PlanEntry>& entries, size_t n_tokens, double seconds);
    // The slot's part of a decoded batch; a failure fails this slot's request only.
    void apply_entry(const PlanEntry& e, size_t first_row);
    // A verified draft's counts: the slot's timings and the drafter kind's metrics.
    void count_draft(Slot& s, size_t kind, size_t n_drafted, size_t n_accepted);
    void step_decode(Slot& slot, const PlanEntry& e, size_t first_row);
    void step_prompt(Slot& slot, const PlanEntry& e, size_t first_row);
    // Sends the tokens of one step through the slot's pipeline and the sink; ends the request or leaves
    // the last token pending for the next step.
    void deliver(Slot& slot, engine::spec::Verified&& step);
    // Ends the slot's request: the text and tokens still held back go out (with `out`, the last step's
    // output, when given), unless a stop string ended it.
    void finish(Slot& slot, const PipelineEnd& end, TokenOutput out = {});
    // Moves the first n held tokens (and their probabilities) of the slot into out.
    static void take_held(Slot& slot, TokenOutput& out, size_t n);
    void fail(Slot& slot, int status, const std::string& message);
    void release(Slot& slot);
    void update_gauges();

    const engine::Model& model_;
    engine::Context& ctx_;
    SchedulerConfig config_;
    int32_t n_ctx_slot_ = 0;
    std::vector<std::string> pieces_;  // token texts for DRY

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Task>> queue_;
    std::deque<SlotAction> actions_;
    EmbedQueue embed_queue_;
    std::atomic<bool> asleep_{false};
    std::vector<Slot> slots_;         // engine thread only
    // Whether requests still waited for a slot after the last seat_tasks (engine thread only): a stream that
    // finishes early then lets one start, and the slots' drafts are priced as throughput.
    bool tasks_waiting_ = false;
    // prepare_drafts' scratch (engine thread only, kept to spare the allocations): the slots that wait for
    // the step (decoding, or evaluating their prompt) and their progress.
    std::vector<engine::spec::StreamProgress> wait_streams_;
    std::vector<Slot*> wait_slots_;
    std::vector<SlotInfo> snapshot_;  // copied from slots_ after each iteration, under mu_
    bool stop_ = false;
    bool wake_ = false;
    std::thread thread_;
    Metrics metrics_;
    uint64_t iteration_ = 0;
    engine::spec::StepCostModel step_cost_;
    engine::spec::DraftModelCost draft_cost_;  // a draft model's, measured
    uint64_t use_counter_ = 0;
    HostPromptCache host_cache_;  // engine thread only
};

}  // namespace sched
