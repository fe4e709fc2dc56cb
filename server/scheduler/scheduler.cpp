#include "server/scheduler/scheduler.h"

#include "engine/grammar/grammar_error.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

#include "engine/model/embeddings.h"
#include "engine/model/kv_shift.h"
#include "engine/model/kv_state.h"
#include "engine/speculative/ngram_drafters.h"

namespace sched {

int32_t SpecConfig::draft_cap(engine::spec::DrafterType t) const {
    using engine::spec::DrafterType;
    switch (t) {
        case DrafterType::NgramSimple: return ngram_simple.m;
        case DrafterType::NgramMapK: return ngram_map_k.m;
        case DrafterType::NgramMapK4v: return ngram_map_k4v.m;
        case DrafterType::NgramMod: return ngram_mod_n_max;
        default: return 0;
    }
}

int32_t SpecConfig::draft_floor(engine::spec::DrafterType t) const {
    return t == engine::spec::DrafterType::NgramMod ? ngram_mod_n_min : 0;
}

namespace {
// The most tokens a draft model may have to catch up on for a probe (a draft that has not paid lately).
constexpr size_t kProbeMaxCatchUp = 64;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

const char* slot_state_name(SlotState s) {
    switch (s) {
        case SlotState::Idle:
            return "idle";
        case SlotState::WaitOther:
            return "wait_other";
        case SlotState::Started:
            return "started";
        case SlotState::ProcessingPrompt:
            return "processing_prompt";
        case SlotState::DonePrompt:
            return "done_prompt";
        case SlotState::Generating:
            return "generating";
    }
    return "unknown";
}

namespace {

// Busy slots in the order their requests arrived.
bool arrived_before(const Slot* a, const Slot* b) {
    return a->task->id < b->task->id;
}

}  // namespace

Scheduler::Scheduler(const engine::Model& model, engine::Context& ctx, SchedulerConfig config)
    : model_(model),
      ctx_(ctx),
      config_(config),
      host_cache_(config.cache_ram_mib < 0 ? -1 : config.cache_ram_mib * 1024 * 1024) {
    if (config_.n_parallel < 1) config_.n_parallel = 1;
    n_ctx_slot_ = config_.shared_context ? (int32_t)ctx_.n_ctx() : (int32_t)(ctx_.n_ctx() / (uint32_t)config_.n_parallel);
    slots_.resize((size_t)config_.n_parallel);
    for (int i = 0; i < config_.n_parallel; ++i) {
        slots_[(size_t)i].id = i;
        slots_[(size_t)i].cache_lora.assign(ctx_.params().lora.size(), 0.0f);
    }
    const auto& vocab = model_.vocab();
    pieces_.resize((size_t)vocab.n_tokens());
    for (int i = 0; i < vocab.n_tokens(); ++i) pieces_[(size_t)i] = vocab.token_to_piece(i);
    for (auto& slot : slots_)
        for (engine::spec::DrafterType t : config_.spec.types) {
            using engine::spec::DrafterType;
            switch (t) {
                case DrafterType::DraftModel:
                    break;  // one model for every slot: config_.draft_model
                case DrafterType::NgramSimple: {
                    const auto& z = config_.spec.ngram_simple;
                    slot.drafters.push_back(engine::spec::make_ngram_simple(z.n > 0 ? z.n : engine::spec::kNgramSimpleKey, std::max(z.min_hits, 1)));
                    break;
                }
                case DrafterType::NgramMapK: {
                    const auto& z = config_.spec.ngram_map_k;
                    slot.drafters.push_back(engine::spec::make_ngram_map_k(z.n > 0 ? z.n : engine::spec::kNgramMapKKey, std::max(z.min_hits, 1)));
                    break;
                }
                case DrafterType::NgramMapK4v: {
                    const auto& z = config_.spec.ngram_map_k4v;
                    slot.drafters.push_back(engine::spec::make_ngram_map_k4v(z.n > 0 ? z.n : engine::spec::kNgramMapK4vKey, std::max(z.min_hits, 1)));
                    break;
                }
                case DrafterType::NgramMod:
                    slot.drafters.push_back(engine::spec::make_ngram_mod(config_.spec.ngram_mod_n_match));
                    break;
                case DrafterType::NgramCache:
                    slot.drafters.push_back(engine::spec::make_ngram_cache(config_.ngram_store));
                    break;
                case DrafterType::Lookahead:
                    break;  // the slot's LookaheadState, set up per request
            }
        }
    snapshot_.resize(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
        snapshot_[i].id = (int)i;
        snapshot_[i].n_ctx = n_ctx_slot_;
    }
}

Scheduler::~Scheduler() {
    stop();
}

void Scheduler::warmup() {
    const auto t0 = Clock::now();
    try {
        const size_t n = ctx_.warmup();
        if (config_.draft_model) config_.draft_model->warmup();
        spdlog::info("warmup: {} tokens in {:.1f} ms{}", n, ms_between(t0, Clock::now()),
                     config_.draft_model ? " (and the draft model)" : "");
    } catch (const std::exception& e) {
        spdlog::warn("warmup failed ({}); serving without it", e.what());
    }
}

void Scheduler::start(bool warm) {
    // The warmup runs on the engine thread, the thread that computes from now on (its CPU placement).
    std::promise<void> warmed;
    std::future<void> done = warmed.get_future();
    thread_ = std::thread([this, warm, &warmed] {
        if (warm) warmup();
        warmed.set_value();
        run();
    });
    done.wait();
}

void Scheduler::stop() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Scheduler::submit(std::shared_ptr<Task> task) {
    // No adapter scales given: none applied.
    if (task->lora.empty()) task->lora.assign(ctx_.params().lora.size(), 0.0f);
    if (task->lora.size() != ctx_.params().lora.size())
        throw std::invalid_argument("a task's LoRA scales must name every loaded adapter");
    {
        std::lock_guard<std::mutex> lk(mu_);
        queue_.push_back(std::move(task));
    }
    cv_.notify_all();
}

void Scheduler::submit_embed(std::shared_ptr<EmbedTask> task) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        embed_queue_.push(std::move(task));
        wake_ = true;
    }
    cv_.notify_all();
}

void Scheduler::submit_action(SlotAction action) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        actions_.push_back(std::move(action));
    }
    cv_.notify_all();
}

void Scheduler::cancel(const std::shared_ptr<Task>& task) {
    task->cancelled.store(true);
    {
        std::lock_guard<std::mutex> lk(mu_);
        wake_ = true;
    }
    cv_.notify_all();
}

std::vector<SlotInfo> Scheduler::slots_snapshot() const {
    std::lock_guard<std::mutex> lk(mu_);
    return snapshot_;
}

bool Scheduler::idle() const {
    std::lock_guard<std::mutex> lk(mu_);
    if (!queue_.empty()) return false;
    for (const auto& s : snapshot_)
        if (s.state != SlotState::Idle) return false;
    return true;
}

void Scheduler::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lk(mu_);
            const auto busy = [&] {
                for (const auto& s : slots_)
                    if (s.busy()) return true;
                return false;
            };
            // Embeddings left waiting for a slot while every slot generated are retried once one frees.
            const auto work = [&] {
                return stop_ || wake_ || !queue_.empty() || !actions_.empty() || busy() || !embed_queue_.empty();
            };
            bool idle_long = false;
            if (config_.sleep_idle_seconds > 0 && !asleep_.load())
                idle_long = !cv_.wait_for(lk, std::chrono::seconds(config_.sleep_idle_seconds), work);
            else
                cv_.wait(lk, work);
            if (stop_) break;
            if (idle_long) {
                lk.unlock();
                go_to_sleep();
                continue;
            }
            wake_ = false;
        }
        if (asleep_.load() && !wake_up()) continue;
        drop_cancelled();
        run_actions();
        seat_tasks();
        make_room();
        // Embeddings with no generation step to ride along run on their own (on an embeddings-only server
        // always); beside generation, run_iteration seats them in the step's decode call.
        if (!embed_queue_.empty() &&
            std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy(); }))
            run_embeddings();
        prepare_drafts();
        try {
            run_iteration();
        } catch (const std::exception& e) {
            // Failures of one request are handled where they happen (apply_entry, execute); reaching
            // here is a bug in the scheduler itself, after which no slot's state can be trusted.
            spdlog::error("scheduler iteration failed: {}", e.what());
            for (auto& s : slots_)
                if (s.busy()) fail(s, 500, std::string("internal error: ") + e.what());
        }
        update_gauges();
    }
    // Shutting down: fail whatever is left so no client hangs.
    for (auto& s : slots_)
        if (s.busy()) fail(s, 503, "the server is shutting down");
    fail_waiting(503, "the server is shutting down");
}

void Scheduler::fail_waiting(int status, const std::string& why) {
    std::deque<std::shared_ptr<Task>> tasks;
    std::deque<SlotAction> actions;
    {
        std::lock_guard<std::mutex> lk(mu_);
        tasks.swap(queue_);
        actions.swap(actions_);
    }
    for (auto& t : tasks) t->sink->on_error(status, why);
    for (auto& a : actions) a.done(SlotActionResult{status, why});
    embed_queue_.fail_all(status, why);
}

void Scheduler::run_actions() {
    std::deque<SlotAction> ready;
    {
        std::lock_guard<std::mutex> lk(mu_);
        // An action waits until its slot is idle; the others keep their order.
        for (auto it = actions_.begin(); it != actions_.end();) {
            if (!slots_[(size_t)it->slot].busy()) {
                ready.push_back(std::move(*it));
                it = actions_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& a : ready) a.done(do_action(slots_[(size_t)a.slot], a));
}

// A slot file does not record the control vectors its keys were computed with: a cache saved on a
// steered server would restore as if unsteered elsewhere, and an unsteered one here as if steered.
void Scheduler::refuse_slot_files_with_control_vectors(int32_t slot) const {
    if (ctx_.params().cvec)
        throw engine::StateFileError("slot " + std::to_string(slot) +
                                     ": slot files cannot record the server's control vectors; run without "
                                     "--control-vector to save or restore slots");
}

SlotActionResult Scheduler::do_action(Slot& slot, const SlotAction& a) {
    SlotActionResult r;
    const auto t0 = Clock::now();
    try {
        switch (a.kind) {
            case SlotAction::Kind::Save:
                refuse_slot_files_with_control_vectors(slot.id);
                // A slot file holds tokens and keys, not the adapter settings they were computed with.
                for (float x : slot.cache_lora)
                    if (x != 0.0f)
                        throw engine::StateFileError("slot " + std::to_string(slot.id) +
                                                     " holds a cache computed with LoRA adapters, which slot files "
                                                     "cannot record; save a slot used without adapters");
                r.n_bytes = engine::save_seq_state(ctx_, slot.id, slot.cache_tokens, a.path);
                r.n_tokens = (int32_t)slot.cache_tokens.size();
                break;
            case SlotAction::Kind::Restore: {
                refuse_slot_files_with_control_vectors(slot.id);
                // Restored prompts must leave room to generate, as prompts do.
                engine::LoadedState st =
                    engine::load_seq_state(ctx_, slot.id, a.path, (size_t)n_ctx_slot_ - 1);
                slot.cache_tokens = std::move(st.tokens);
                slot.cache_lora.assign(ctx_.params().lora.size(), 0.0f);  // saved without adapters (above)
                slot.last_used = ++use_counter_;
                r.n_tokens = (int32_t)slot.cache_tokens.size();
                r.n_bytes = st.n_bytes;
                break;
            }
            case SlotAction::Kind::Erase:
                r.n_tokens = (int32_t)slot.cache_tokens.size();
                forget_cache(slot);
                break;
        }
    } catch (const engine::StateFileError& e) {
        r.status = 400;
        r.error = e.what();
    } catch (const std::exception& e) {
        spdlog::error("slot {} action failed: {}", slot.id, e.what());
        r.status = 500;
        r.error = e.what();
    }
    r.ms = ms_between(t0, Clock::now());
    return r;
}

void Scheduler::go_to_sleep() {
    for (auto& s : slots_) forget_cache(s);  // every slot is idle: nothing ran for the whole period
    ctx_.kv().seq_rm(-1, -1, -1);             // and nothing else may hold cells
    size_t bytes = host_cache_.clear();
    publish_host_stats();
    bytes += ctx_.model().release_memory() + ctx_.kv().release_pages();
    if (config_.draft_model) bytes += config_.draft_model->release_memory();
    asleep_.store(true);
    spdlog::info("sleeping after {} s without work: {:.1f} MiB of weights, KV cache and cached prompts given "
                 "back; the next request wakes the server",
                 config_.sleep_idle_seconds, (double)bytes / (1024.0 * 1024.0));
    if (config_.on_sleep_change) config_.on_sleep_change(true);
}

bool Scheduler::wake_up() {
    const auto t0 = Clock::now();
    try {
        ctx_.model().restore_memory();
        if (config_.draft_model) config_.draft_model->restore_memory();
        draft_cost_.skip_next_call();  // its weights fault back in during the first draft
    } catch (const std::exception& e) {
        // The weights cannot be read again (the file went away or changed): what waits fails, the server
        // stays asleep and tries again with the next request.
        spdlog::error("cannot wake up: {}", e.what());
        fail_waiting(503, std::string("the model could not be loaded again after sleeping: ") + e.what());
        return false;
    }
    asleep_.store(false);
    spdlog::info("awake again after {:.1f} ms", ms_between(t0, Clock::now()));
    if (config_.on_sleep_change) config_.on_sleep_change(false);
    return true;
}

std::vector<engine::SeqId> Scheduler::embedding_seqs(size_t want, bool evict) {
    std::vector<engine::SeqId> seqs;
    for (auto& s : slots_)
        if (seqs.size() < want && !s.busy() && s.cache_tokens.empty()) seqs.push_back(s.id);
    // A server that also generates keeps prompts in its idle slots: the least recently used give them up
    // (to the host-memory prompt cache, as for a new generation request).
    while (evict && seqs.size() < want) {
        Slot* lru = nullptr;
        for (auto& s : slots_)
            if (!s.busy() && !s.cache_tokens.empty() && (!lru || s.last_used < lru->last_used)) lru = &s;
        if (!lru) break;
        keep_in_host(host_state_of(*lru));
        forget_cache(*lru);
        seqs.push_back(lru->id);
    }
    for (engine::SeqId id : seqs) {  // embeddings are computed without LoRA adapters
        Slot& s = slots_[(size_t)id];
        s.cache_lora.assign(ctx_.params().lora.size(), 0.0f);
        ctx_.set_lora_scales(s.id, s.cache_lora);
    }
    return seqs;
}

void Scheduler::run_embeddings() {
    // On the idle slots that hold nothing, or else the least recently used idle one; while every slot
    // generates, the embeddings wait.
    size_t n_empty = 0;
    for (const auto& s : slots_) n_empty += !s.busy() && s.cache_tokens.empty();
    // Counted as llama-server counts them: prompt tokens and time, decode calls, the longest sequence.
    embed_queue_.run(ctx_, embedding_seqs(std::max<size_t>(1, n_empty), true), [&](const EmbedQueue::Work& w) {
        metrics_.update([&](MetricsSnapshot& m) {
            m.embed_inputs_alone_total += w.inputs;
            m.prompt_tokens_total += w.tokens;
            m.prompt_seconds_total += w.seconds;
            m.n_decode_total += w.decode_calls;
            m.n_tokens_max = std::max<uint64_t>(m.n_tokens_max, w.longest);
        });
    });
}

bool Scheduler::ride_embeddings(uint32_t n_free, EmbedRide& ride) {
    size_t n_idle = 0;
    for (const auto& s : slots_) n_idle += !s.busy();
    std::deque<std::shared_ptr<EmbedTask>> rest;
    size_t n_inputs = 0, n_tokens = 0;
    // Whole tasks, oldest first, while their inputs fit the step's free tokens and the idle slots.
    for (auto& t : embed_queue_.take()) {
        if (t->cancelled.load()) continue;
        size_t tokens = 0;
        for (const auto& in : t->inputs) tokens += in.size();
        if (!rest.empty() || n_inputs + t->inputs.size() > n_idle || n_tokens + tokens > n_free) {
            rest.push_back(std::move(t));
            continue;
        }
        n_inputs += t->inputs.size();
        n_tokens += tokens;
        ride.tasks.push_back(std::move(t));
    }
    embed_queue_.put_back(std::move(rest));
    if (ride.tasks.empty()) return false;
    ride.seqs = embedding_seqs(n_inputs, true);
    return true;
}

void Scheduler::finish_ride(EmbedRide& ride) {
    const engine::Model& m = ctx_.model();
    const size_t n_embd = m.hparams().n_embd;
    size_t k = 0;
    for (auto& t : ride.tasks) {
        EmbedResult r;
        const engine::Pooling pooling = engine::effective_pooling(m, t->pooling);
        for (const auto& in : t->inputs) {
            const size_t row0 = ride.first_row[k++];
            std::vector<float> rows(in.size() * n_embd);
            for (size_t i = 0; i < in.size(); ++i)
                std::copy_n(ctx_.hidden(row0 + i), n_embd, rows.begin() + (std::ptrdiff_t)(i * n_embd));
            if (r.status != 200) continue;
            try {
                r.vectors.push_back(engine::embedding_of_rows(m, rows.data(), in.size(), pooling, t->normalize));
            } catch (const std::invalid_argument& e) {
                r = {400, e.what(), {}};
            }
        }
        t->done(std::move(r));
    }
    for (engine::SeqId q : ride.seqs) ctx_.kv().seq_rm(q, -1, -1);
}

std::vector<SlotCacheView> Scheduler::cache_views() const {
    std::vector<SlotCacheView> v;
    for (const auto& s : slots_) v.push_back({s.id, !s.busy(), &s.cache_tokens, s.last_used, &s.cache_lora});
    return v;
}

void Scheduler::forget_cache(Slot& slot) {
    ctx_.kv().seq_rm(slot.id, -1, -1);
    slot.cache_tokens.clear();
}

void Scheduler::drop_cancelled() {
    std::vector<std::shared_ptr<Task>> dropped;
    {
        std::lock_guard<std::mutex> lk(mu_);
        for (auto it = queue_.begin(); it != queue_.end();) {
            if ((*it)->cancelled.load()) {
                dropped.push_back(*it);
                it = queue_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& s : slots_)
        if (s.busy() && s.task->cancelled.load()) {
            metrics_.update([](MetricsSnapshot& m) { ++m.requests_cancelled_total; });
            release(s);
        }
    if (!dropped.empty())
        metrics_.update([&](MetricsSnapshot& m) { m.requests_cancelled_total += dropped.size(); });
}

void Scheduler::seat_tasks() {
    for (;;) {
        std::shared_ptr<Task> task;
        Slot* target = nullptr;
        {
            std::lock_guard<std::mutex> lk(mu_);
            const std::vector<SlotCacheView> views = cache_views();
            for (auto it = queue_.begin(); it != queue_.end(); ++it) {
                const int id = choose_slot(views, (*it)->prompt, (*it)->cache_prompt, (*it)->id_slot,
                                           config_.slot_prompt_similarity, (*it)->lora);
                if (id < 0) continue;
                target = &slots_[(size_t)id];
                task = *it;
                queue_.erase(it);
                break;
            }
            tasks_waiting_ = !queue_.empty();
        }
        if (!target) return;
        start_task(*target, std::move(task));
        if (config_.cache_idle_slots && host_cache_.enabled()) cache_idle_slots(*target);
    }
}

HostPromptCache::Entry Scheduler::host_state_of(Slot& slot) {
    HostPromptCache::Entry e;
    const size_t n_bytes = engine::seq_state_size(ctx_, slot.cache_tokens.size());
    if (!host_cache_.worth_saving(slot.cache_tokens, slot.cache_lora, n_bytes)) return e;
    try {
        e.state = engine::seq_state_bytes(ctx_, slot.id, slot.cache_tokens);
    } catch (const std::exception& ex) {
        spdlog::warn("slot {}: its cached prompt cannot be kept in host memory: {}", slot.id, ex.what());
        return {};
    }
    e.tokens = slot.cache_tokens;
    e.lora = slot.cache_lora;
    return e;
}

void Scheduler::keep_in_host(HostPromptCache::Entry e) {
    if (e.state.empty()) return;
    const size_t n_tokens = e.tokens.size(), n_bytes = e.state.size();
    const bool kept = host_cache_.insert(std::move(e.tokens), std::move(e.lora), std::move(e.state));
    publish_host_stats();
    if (kept)
        spdlog::debug("host-memory prompt cache: kept a state of {} tokens ({} bytes); {} entries, {} bytes", n_tokens,
                      n_bytes, host_cache_.stats().entries, host_cache_.stats().bytes);
}

bool Scheduler::restore_from_host(Slot& slot, const HostPromptCache::Match& m) {
    const std::vector<uint8_t>& st = m.entry->state;
    try {
        engine::restore_seq_state(ctx_, slot.id, st.data(), st.size(), ctx_.n_ctx(), "a host-memory prompt state",
                                  m.n_prefix);
    } catch (const engine::StateFileError& e) {
        spdlog::info("slot {}: not restored from the host-memory prompt cache: {}", slot.id, e.what());
        return false;
    }
    host_cache_.record_hit(m);
    publish_host_stats();
    spdlog::info("slot {}: {} prompt tokens restored from the host-memory prompt cache", slot.id, m.n_prefix);
    return true;
}

void Scheduler::evict_to_host(Slot& slot) {
    keep_in_host(host_state_of(slot));
    forget_cache(slot);
}

void Scheduler::cache_idle_slots(const Slot& seated) {
    for (auto& s : slots_) {
        if (&s == &seated || s.busy() || s.cache_tokens.empty()) continue;
        evict_to_host(s);
    }
}

void Scheduler::publish_host_stats() {
    metrics_.update([&](MetricsSnapshot& m) { m.host_cache = host_cache_.stats(); });
}

void Scheduler::start_task(Slot& slot, std::shared_ptr<Task> task) {
    const auto now = Clock::now();
    metrics_.update([](MetricsSnapshot& m) { ++m.requests_total; });
    if ((int32_t)task->prompt.size() >= n_ctx_slot_) {
        task->sink->on_error(400, "the request exceeds the available context size (prompt of " +
                                      std::to_string(task->prompt.size()) + " tokens, context of " +
                                      std::to_string(n_ctx_slot_) + " tokens per slot); try increasing it");
        return;
    }
    slot.task = std::move(task);
    Task& t = *slot.task;
    try {
        std::unique_ptr<engine::TokenConstraint> grammar = t.make_grammar ? t.make_grammar() : nullptr;
        slot.chain.emplace(t.sampling, ctx_.n_vocab(), n_ctx_slot_, pieces_, std::move(grammar),
                           t.grammar_first);
        if (config_.spec.has(engine::spec::DrafterType::Lookahead) && !t.spec.disabled && t.spec.n_max != 0) {
            const engine::spec::LookaheadParams lp = lookahead_params(t);
            const std::string err = engine::spec::lookahead_fit_error(lp, ctx_.params().n_batch, n_ctx_slot_,
                                                                      lookahead_lanes());
            if (!err.empty()) throw std::invalid_argument(err);
        }
    } catch (const std::exception& e) {
        t.sink->on_error(400, e.what());
        slot.task.reset();
        return;
    }
    for (engine::Token tok : t.prompt) slot.chain->accept(tok, false);
    slot.pipeline.emplace(model_.vocab(), t.stop, t.n_predict, t.ignore_eos, config_.special, t.n_indent,
                          t.shown_tokens);
    slot.held_tokens.clear();
    slot.held_probs.clear();
    slot.n_released = 0;
    slot.pending = -1;
    slot.draft.clear();
    slot.draft_q.clear();
    slot.history = t.prompt;
    slot.pace = 1.0;  // what an earlier request's drafts made says little of this one's
    slot.spec_on = config_.spec.enabled() && !t.spec.disabled;
    slot.spec_n_max = t.spec.n_max >= 0 ? t.spec.n_max : config_.spec.n_max;
    slot.spec_n_min = t.spec.n_min >= 0 ? t.spec.n_min : config_.spec.n_min;
    slot.spec_p_min = t.spec.p_min >= 0.0f ? t.spec.p_min : config_.spec.p_min;
    if (slot.spec_n_max <= 0) slot.spec_on = false;
    // Draft-model draws and p/q acceptance have their own generator, seeded from the request's seed.
    slot.spec_rng.seed(slot.chain->seed() ^ 0x5bd1e995u);
    for (auto& d : slot.drafters) d->begin();
    slot.la_on = slot.spec_on && config_.spec.has(engine::spec::DrafterType::Lookahead);
    slot.la_step = {};
    slot.la_seqs.clear();
    slot.la_steps = slot.la_evaluated = slot.la_accepted = 0;
    if (slot.la_on) {
        const engine::spec::LookaheadParams lp = lookahead_params(t);
        // The pool stays from the slot's earlier requests (n-grams of their prompts and replies).
        slot.la.begin(lp, t.prompt, /*keep_pool=*/true);
        slot.la_fixed = t.spec.la_fixed >= 0 ? t.spec.la_fixed == 1 : config_.spec.lookahead_fixed;
        // What the controller learned about step shapes holds for the next request with the same shapes.
        if (!(slot.la_ctl_params == lp)) {
            slot.la_ctl.reset(lp);
            slot.la_gate.reset();
            slot.la_ctl_params = lp;
        }
    }
    slot.timings = Timings{};
    slot.timings.queue_ms = ms_between(t.arrival, now);
    slot.t_start = now;

    // Prompt cache: keep the prefix this slot already holds, or share a longer one that another slot
    // holds (the cells are stored once); evaluate only the rest.
    engine::KvCache& kv = ctx_.kv();
    PrefixReuse reuse;
    if (t.cache_prompt) reuse = plan_prefix_reuse(cache_views(), slot.id, t.prompt, t.lora);
    // The host-memory cache serves the prompt when it spares enough more tokens than the slots can.
    HostPromptCache::Match from_host;
    if (t.cache_prompt) from_host = host_cache_.find(t.prompt, t.lora);
    if (from_host.n_prefix < (size_t)reuse.n_reuse + kHostCacheMinTokens) from_host = {};
    // A slot cache this request keeps less than half of, losing at least kHostCacheMinTokens, goes to the
    // host-memory cache before it is overwritten (a copy of the whole state for a small tail would not pay).
    // It is kept there after the restore below, so that making room for it cannot evict the state restored.
    const size_t n_kept = from_host.entry || reuse.donor >= 0 ? 0 : (size_t)reuse.n_reuse;
    const size_t n_held = slot.cache_tokens.size();
    HostPromptCache::Entry displaced;
    if (n_held >= n_kept + kHostCacheMinTokens && n_kept * 2 < n_held) displaced = host_state_of(slot);
    const bool restored = from_host.entry && restore_from_host(slot, from_host);
    keep_in_host(std::move(displaced));
    // Chunks of the slot's own cache are reusable only if computed with the request's adapters.
    const int32_t n_cache_reuse =
        slot.cache_lora != t.lora ? 0 : t.n_cache_reuse >= 0 ? t.n_cache_reuse : config_.n_cache_reuse;
    if (restored) {
        reuse = {-1, (int32_t)from_host.n_prefix};  // the sequence holds exactly the restored prefix
    } else if (reuse.donor >= 0) {
        kv.seq_rm(slot.id, -1, -1);
        kv.seq_cp(reuse.donor, slot.id, 0, reuse.n_reuse);
    } else if (t.cache_prompt && n_cache_reuse > 0) {
        const std::vector<engine::Token> old = slot.cache_tokens;
        reuse.n_reuse = reuse_cache_chunks(slot, old, reuse.n_reuse, n_cache_reuse);
    } else {
        kv.seq_rm(slot.id, reuse.n_reuse, -1);
    }
    slot.cache_tokens.assign(t.prompt.begin(), t.prompt.begin() + reuse.n_reuse);
    // The rest of this slot's sequence is computed with the request's adapters.
    slot.cache_lora = t.lora;
    ctx_.set_lora_scales(slot.id, t.lora);
    slot.prompt_pos = (size_t)reuse.n_reuse;
    slot.n_cached = reuse.n_reuse;
    slot.truncated = false;
    slot.timings.cache_n = reuse.n_reuse;
    metrics_.update([&](MetricsSnapshot& m) { m.prompt_tokens_cached_total += (uint64_t)reuse.n_reuse; });
    slot.last_used = ++use_counter_;
    slot.state = SlotState::ProcessingPrompt;
}

int32_t Scheduler::reuse_cache_chunks(Slot& slot, const std::vector<engine::Token>& old, int32_t n_past,
                                      int32_t n_min) {
    // The prompt continues at head_p; the old cache at head_c. A run of at least n_min equal tokens
    // is moved from head_c down to head_p (what lies between is dropped); otherwise the cache side
    // advances by one. What is left of the old cache after the last moved chunk is removed.
    engine::KvCache& kv = ctx_.kv();
    const std::vector<engine::Token>& prompt = slot.task->prompt;
    // At least the last prompt token is evaluated: its logits start the generation.
    const size_t p_end = prompt.empty() ? 0 : prompt.size() - 1;
    size_t head_c = (size_t)n_past, head_p = (size_t)n_past;
    int32_t n_moved = 0;
    while (head_c < old.size() && head_p < p_end) {
        size_t n = 0;
        while (head_c + n < old.size() && head_p + n < p_end && old[head_c + n] == prompt[head_p + n]) ++n;
        if ((int32_t)n < n_min) {
            ++head_c;
            continue;
        }
        const engine::Pos shift = (engine::Pos)head_p - (engine::Pos)head_c;
        try {
            kv.seq_rm(slot.id, (engine::Pos)head_p, (engine::Pos)head_c);
            kv.seq_add(slot.id, (engine::Pos)head_c, (engine::Pos)(head_c + n), shift);
        } catch (const std::runtime_error& e) {  // no cell to copy a shared one: evaluate the rest
            spdlog::debug("slot {}: cache reuse stopped: {}", slot.id, e.what());
            break;
        }
        head_c += n;
        head_p += n;
        n_moved += (int32_t)n;
    }
    kv.seq_rm(slot.id, (engine::Pos)head_p, -1);
    if (n_moved > 0)
        spdlog::debug("slot {}: cache reuse moved {} tokens; {} of {} prompt tokens cached", slot.id, n_moved,
                      head_p, prompt.size());
    return (int32_t)head_p;
}

void Scheduler::release(Slot& slot) {
    // The cache stays: cache_tokens lists exactly what was evaluated.
    slot.task.reset();
    slot.chain.reset();
    slot.pipeline.reset();
    slot.state = SlotState::Idle;
    slot.held_tokens.clear();
    slot.held_probs.clear();
    slot.n_released = 0;
    slot.pending = -1;
    slot.draft.clear();
    slot.draft_q.clear();
    slot.history.clear();
    slot.la_on = false;
    slot.la_step = {};
    for (engine::SeqId q : slot.la_seqs) ctx_.kv().seq_rm(q, -1, -1);
    slot.la_seqs.clear();
    std::vector<uint8_t>().swap(slot.swapped);
    slot.swapped_tokens = 0;
}

void Scheduler::fail(Slot& slot, int status, const std::string& message) {
    const std::shared_ptr<Task> task = slot.task;
    forget_cache(slot);
    release(slot);
    update_gauges();
    if (task) task->sink->on_error(status, message);
}

engine::Context::Status Scheduler::decode_with_eviction(const engine::Batch& batch) {
    engine::Context::Status st = ctx_.decode(batch);
    if (st != engine::Context::Status::NoKvSpace) return st;
    bool evicted = false;
    for (auto& s : slots_)
        if (!s.busy() && !s.cache_tokens.empty()) {
            forget_cache(s);
            evicted = true;
        }
    return evicted ? ctx_.decode(batch) : st;
}

uint32_t Scheduler::free_cells() const {
    const engine::KvCache& kv = ctx_.kv();
    return kv.size() - kv.n_used();
}

bool Scheduler::free_cells_for(uint32_t need, bool take_prompts, const Slot* keep) {
    while (free_cells() < need) {
        // Idle slots' cached prompts first (least recently used first; kept in host memory when it pays).
        Slot* victim = nullptr;
        for (auto& s : slots_)
            if (!s.busy() && !s.cache_tokens.empty() && (!victim || s.last_used < victim->last_used)) victim = &s;
        if (victim) {
            evict_to_host(*victim);
            continue;
        }
        // Then prompts not yet evaluated to their end, newest first: they start over when they fit.
        if (!take_prompts) return false;
        for (auto& s : slots_)
            if (&s != keep && s.state == SlotState::ProcessingPrompt && !s.cache_tokens.empty() &&
                (!victim || s.task->id > victim->task->id))
                victim = &s;
        if (!victim) return false;
        spdlog::info("slot {}: the context is full: its prompt gives back {} cells and starts over later", victim->id,
                     victim->cache_tokens.size());
        forget_cache(*victim);
        victim->prompt_pos = 0;
        victim->n_cached = 0;
        victim->timings.cache_n = 0;
    }
    return true;
}

bool Scheduler::swap_out(Slot& s) {
    try {
        s.swapped = engine::seq_state_bytes(ctx_, s.id, s.cache_tokens);
    } catch (const std::exception& e) {
        spdlog::warn("slot {}: its state cannot be kept in host memory: {}", s.id, e.what());
        return false;
    }
    s.swapped_tokens = s.cache_tokens.size();
    forget_cache(s);
    metrics_.update([](MetricsSnapshot& m) { ++m.requests_preempted_total; });
    spdlog::info("slot {}: the context is full: task {} waits in host memory with its {} tokens until there is room",
                 s.id, s.task->id, s.swapped_tokens);
    return true;
}

bool Scheduler::swap_in(Slot& s) {
    try {
        engine::LoadedState st = engine::restore_seq_state(ctx_, s.id, s.swapped.data(), s.swapped.size(),
                                                           ctx_.n_ctx(), "a preempted request's state");
        s.cache_tokens = std::move(st.tokens);
    } catch (const engine::StateFileError& e) {
        spdlog::debug("slot {}: not swapped in yet: {}", s.id, e.what());
        return false;
    }
    ctx_.set_lora_scales(s.id, s.cache_lora);
    std::vector<uint8_t>().swap(s.swapped);
    s.swapped_tokens = 0;
    spdlog::info("slot {}: task {} goes on with its {} tokens", s.id, s.task->id, s.cache_tokens.size());
    return true;
}

void Scheduler::make_room() {
    if (!config_.shared_context) return;
    const auto n_decoding = [&] {
        uint32_t n = 0;
        for (const auto& s : slots_) n += s.decoding() ? 1 : 0;
        return n;
    };
    // Preempted requests come back first, oldest first, when their cells fit beside a token for each
    // generating slot and their own; unfinished prompts give way to them (none runs while one waits).
    std::vector<Slot*> waiting;
    for (auto& s : slots_)
        if (s.busy() && s.swapped_out()) waiting.push_back(&s);
    std::sort(waiting.begin(), waiting.end(), arrived_before);
    for (Slot* s : waiting) {
        if (!free_cells_for((uint32_t)s->swapped_tokens + n_decoding() + 1, true, nullptr) || !swap_in(*s)) break;
    }
    // Every generating slot's next token needs a cell: idle caches and unfinished prompts go first, then the
    // newest generating requests wait in host memory (vLLM's preemption, by swapping: the request goes on
    // later from the same state, so its output does not change).
    while (free_cells() < n_decoding()) {
        if (free_cells_for(n_decoding(), true, nullptr)) break;
        std::vector<Slot*> gen;
        for (auto& s : slots_)
            if (s.decoding()) gen.push_back(&s);
        if (gen.size() <= 1) break;  // the oldest always keeps its cells (its context fits the cache)
        Slot* newest = *std::max_element(gen.begin(), gen.end(), arrived_before);
        if (!swap_out(*newest)) {
            fail(*newest, 503, "the KV cache is full and the request's state could not be kept; try again later");
        }
    }
    // The oldest unfinished prompt that waits for room: when no generating request will free cells, it
    // takes them from idle caches and newer prompts (which start over).
    std::vector<Slot*> prompts;
    for (auto& s : slots_)
        if (s.busy() && s.state == SlotState::ProcessingPrompt) prompts.push_back(&s);
    if (prompts.empty() || !waiting.empty()) return;
    Slot* oldest = *std::min_element(prompts.begin(), prompts.end(), arrived_before);
    const uint32_t rest = (uint32_t)(oldest->task->prompt.size() - oldest->prompt_pos);
    free_cells_for(rest + n_decoding(), n_decoding() == 0, oldest);
}

std::vector<bool> Scheduler::admitted_prompts() const {
    std::vector<bool> ok(slots_.size(), true);
    if (!config_.shared_context) return ok;
    std::vector<const Slot*> prompts;
    uint32_t n_decoding = 0;
    bool preempted = false;
    for (const auto& s : slots_) {
        n_decoding += s.decoding() ? 1 : 0;
        preempted = preempted || (s.busy() && s.swapped_out());
        if (s.busy() && s.state == SlotState::ProcessingPrompt) prompts.push_back(&s);
    }
    std::sort(prompts.begin(), prompts.end(), arrived_before);
    uint64_t room = free_cells() > n_decoding ? free_cells() - n_decoding : 0;
    bool blocked = preempted;
    for (const Slot* s : prompts) {
        // First come, first served: a prompt that does not fit holds back the ones after it.
        const uint64_t rest = s->task->prompt.size() - s->prompt_pos;
        if (!blocked && rest <= room) {
            room -= rest;
            continue;
        }
        blocked = true;
        ok[(size_t)s->id] = false;
    }
    return ok;
}

int32_t Scheduler::lookahead_lanes() const {
    return std::max(0, (int32_t)ctx_.params().n_seq_max - config_.n_parallel);
}

engine::spec::LookaheadParams Scheduler::lookahead_params(const Task& t) const {
    engine::spec::LookaheadParams p = config_.spec.lookahead;
    if (t.spec.la_w >= 0) p.w = t.spec.la_w;
    if (t.spec.la_n >= 0) p.n = t.spec.la_n;
    if (t.spec.la_g >= 0) p.g = t.spec.la_g;
    return p;
}

int32_t Scheduler::draft_room(const Slot& s) const {
    // The pending token and the draft must fit the slot's share of the context.
    return std::max(0, n_ctx_slot_ - s.n_past() - 2);
}

void Scheduler::prepare_drafts() {
    using engine::spec::DrafterType;
    for (auto& s : slots_) {
        s.draft.clear();
        s.draft_q.clear();
        s.draft_from = -1;
        s.la_step = {};
        s.la_seqs.clear();
        s.la_level = 0;
    }
    if (!config_.spec.enabled()) return;
    // Lookahead lanes are shared evenly by the slots that may run a lookahead step.
    int32_t n_la = 0;
    for (const auto& s : slots_) n_la += s.decoding() && s.la_on ? 1 : 0;
    const int32_t lane_share = n_la > 0 ? lookahead_lanes() / n_la : 0;
    // Every stream in the batch waits for a step's extra tokens: with n streams generating, k draft
    // tokens cost n * b * k against a step of a + n * b (b/a = rho), which is what the slot weighs.
    // Slots whose prompts are being evaluated wait for a step's drafts as the decoding ones do: what a draft
    // costs is borne by them too (four requests arriving together: the first to finish its prompt drafted
    // alone, a draft model catching up on its prompt, while the three others' prompts waited).
    int32_t n_gen = 0;
    wait_streams_.clear();
    wait_slots_.clear();
    for (auto& s : slots_) {
        s.ahead = false;
        n_gen += s.decoding() ? 1 : 0;
        if (!s.decoding() && s.state != SlotState::ProcessingPrompt) continue;
        const int32_t n_predict = s.task->n_predict;
        wait_streams_.push_back({n_predict < 0 ? -1 : std::max(n_predict - s.n_decoded(), 0), s.pace});
        wait_slots_.push_back(&s);
    }
    const int32_t n_wait = (int32_t)wait_slots_.size();
    // Streams sure to finish before another one of the step (by their max_tokens and the tokens per step
    // they make) draft only what pays well: see streams_ahead.h. Not while requests wait for a slot (a
    // stream that finishes early lets one start: every token saved is throughput). Lookahead is not held
    // back: its gate prices each branch step itself.
    if (n_wait >= 2 && !tasks_waiting_) {
        const std::vector<bool> ahead = engine::spec::streams_ahead(wait_streams_);
        for (size_t j = 0; j < wait_slots_.size(); ++j) wait_slots_[j]->ahead = ahead[j];
    }
    const double wait_scale = n_gen > 0 ? (double)n_wait / n_gen : 1.0;
    const double r1 = std::min(step_cost_.extra_token_ratio(), 0.99);
    const double rho = r1 / (1.0 - r1);
    const double extra = n_gen * rho / (1.0 + n_gen * rho);
    // A draft model's positions are drafted for all slots at once, and every stream waits for them. A
    // slot's share of a plain step as measured at this size (the linear fit's value at one stream read
    // 50-58 ms where such a step took 32: steps of 1 to 17 tokens under one line), so a draft model learned
    // at one stream is priced right at four. Per number of streams too: one stream's 4-token step (a token
    // and a 3-token draft) is not four streams' plain one.
    const double plain_step = step_cost_.measured_seconds(std::max(n_gen, 1), n_gen) / std::max(n_gen, 1);
    // The unit every price below is in, step_extra's too: the share of a plain step of each slot that waits.
    const double wait_step = plain_step / wait_scale;
    // A draft's or lookahead step's k extra tokens, in wait_steps: every slot of the step waits for
    // them. Measured per step size: a step grows unevenly (tiles of rows), which a per-token ratio
    // misses.
    const auto step_extra = [&](int32_t k) {
        const int32_t n = std::max(n_gen, 1);
        return wait_scale * n * step_cost_.extra_cost(n, k, n_gen);
    };
    // step_extra for k = 0, 1, ...: the same for every slot of the step, so worked out once, as far as asked
    // (the controllers ask for every length up to a slot's cap, lookahead's branch gate for every branch
    // length times its branches).
    std::vector<double> extra_table{0.0};
    const auto extra_upto = [&](int32_t n) -> std::span<const double> {
        while ((int32_t)extra_table.size() <= n)
            extra_table.push_back(step_extra((int32_t)extra_table.size()));
        return std::span<const double>(extra_table).first((size_t)std::max(n, 0) + 1);
    };
    const auto extra_at = [&](int32_t k) { return k <= 0 ? 0.0 : extra_upto(k)[(size_t)k]; };
    // Until a draft model has been timed, assume a draft position costs a third of a target step.
    const double model_ratio =
        draft_cost_.position_seconds() > 0 && wait_step > 0 ? draft_cost_.position_seconds() / wait_step : 0.3;
    const double model_catch_up = wait_step > 0 ? draft_cost_.per_token_seconds() / wait_step : 0.0;
    // What the prices are made of: measured steps and the draft model's costs.
    if (iteration_ % 50 == 0)
        spdlog::debug(
            "draft costs: {} streams, extra token ratio {:.3f} (one stream {:.3f}), step(1) {:.3f} ms, "
            "step(n) {:.3f} ms; draft model {:.3f} ms per position, {:.3f} ms per call, {:.3f} ms per "
            "token caught up",
            n_gen, extra, r1, 1e3 * step_cost_.measured_seconds(1, 1),
            1e3 * plain_step * std::max(n_gen, 1), 1e3 * draft_cost_.position_seconds(),
            1e3 * draft_cost_.call_seconds(), 1e3 * draft_cost_.per_token_seconds());

    // Drafters are asked in the server's priority order; the draft model runs once for every slot that
    // reaches it, and slots whose model draft comes back empty go on down the list.
    struct Pending {
        Slot* slot;
        size_t next;  // position in the priority list after the draft model
    };
    std::vector<Pending> want_model;
    std::vector<engine::spec::DraftModel::Request> reqs;
    std::vector<std::vector<engine::Token>> seqs;  // kept alive for reqs' spans
    seqs.reserve(slots_.size());

    const auto try_from = [&](Slot& s, size_t first) {
        const int32_t room = std::min(s.spec_n_max, draft_room(s));
        size_t ngram_idx = 0;
        for (size_t i = 0; i < first; ++i)
            if (config_.spec.types[i] != DrafterType::DraftModel && config_.spec.types[i] != DrafterType::Lookahead)
                ++ngram_idx;
        for (size_t i = first; i < config_.spec.types.size(); ++i) {
            const DrafterType type = config_.spec.types[i];
            const size_t kind = (size_t)type;
            if (type == DrafterType::Lookahead) {
                if (!s.la_on) continue;
                const auto& shapes = s.la_ctl.shapes();
                int level = s.la_fixed ? (int)shapes.size() - 1 : s.la_ctl.want(extra, std::max(n_gen, 1));
                // Steps of branches alone are judged one by one, by how well the best branch's context
                // matches (the gate): a plain step where the controller saw no gain is still a branch
                // step when this branch is expected to pay. Window shapes run as the controller chose.
                const bool gated = !s.la_fixed && shapes[(size_t)level].w == 0;
                if (gated && level == 0 && shapes.size() > 1 && shapes[1].w == 0) level = 1;
                if (level <= 0) continue;
                // A gated step is judged before it is built: the gate turns most steps down, and building a
                // layout (the pool's ranked continuations, every token's lanes) costs more than asking.
                int32_t len = 0;
                if (gated) {
                    int32_t n_found = 0;
                    const int32_t match = s.la.branch_match(s.pending, s.history, &n_found);
                    if (match < 0) continue;
                    const int32_t g = std::min(shapes[(size_t)level].g, n_found);
                    len = s.la_gate.length(match, s.la.params().n - 1, g, extra_at);
                    if (len <= 0) continue;
                }
                engine::spec::LookaheadLayout l =
                    s.la.layout(s.pending, s.history, shapes[(size_t)level].w, shapes[(size_t)level].g,
                                (int32_t)ctx_.params().n_batch - 1, lane_share, draft_room(s), len);
                if (l.empty()) continue;
                s.draft = l.tokens;
                s.draft_from = (int)kind;
                s.la_step = std::move(l);
                s.la_level = level;
                s.la_gated = gated;
                return;
            }
            const bool model = type == DrafterType::DraftModel;
            const int32_t cap = config_.spec.draft_cap(type);
            const int32_t floor = std::max({s.spec_n_min, config_.spec.draft_floor(type), 1});
            engine::spec::DraftController& ctl = s.draft_ctl[kind];
            const double min_gain = s.ahead ? engine::spec::DraftController::kMinGainAhead
                                            : engine::spec::DraftController::kMinGain;
            const bool skipped = ctl.skip(n_wait, min_gain);
            size_t behind = 0;
            double fixed = 0.0, probe_fixed = -1.0;
            if (model && config_.draft_model && !skipped) {
                behind = config_.draft_model->behind_context(s.id, s.cache_tokens);
                // A draft model far behind (a new prompt, a pause) first catches up: a one-off, spread over
                // the tokens the request may still ask for, so that it is paid early in a reply and not
                // near its end (the last stream of a batch drafting its last few tokens caught up the
                // whole reply for them).
                const int32_t left = std::max(1, s.task->n_predict >= 0
                                                     ? std::min(s.task->n_predict - s.n_decoded(), draft_room(s))
                                                     : draft_room(s));
                if (wait_step > 0) {
                    fixed = draft_cost_.fixed_seconds(behind, left) / wait_step;
                    probe_fixed = draft_cost_.probe_seconds(behind) / wait_step;
                }
            }
            const int32_t n_most = cap > 0 ? std::min(room, cap) : room;
            const int32_t k =
                skipped ? 0
                        : ctl.want(n_most, extra_upto(n_most), model ? model_ratio : 0.0, floor, fixed,
                                   model ? model_catch_up : 0.0, probe_fixed, std::max(n_wait, 1), min_gain);
            if (!model) {
                engine::spec::Drafter& d = *s.drafters[ngram_idx++];
                if (k <= 0) continue;
                std::vector<engine::Token> draft = d.draft(s.history, k);
                if ((int32_t)draft.size() < floor) continue;
                s.draft = std::move(draft);
                s.draft_from = (int)kind;
                return;
            }
            if (k <= 0 || !config_.draft_model) continue;
            // A probe (drafting has not paid lately) first makes the draft model evaluate all it missed
            // since it last drafted for this slot: after a new long prompt, a prefill of the whole prompt
            // in the middle of the reply. Probes are for cheap checks: such a one is skipped.
            if (s.draft_ctl[kind].probing() && behind > kProbeMaxCatchUp) continue;
            seqs.emplace_back(s.cache_tokens);
            seqs.back().push_back(s.pending);
            engine::spec::DraftModel::Request r;
            r.seq = s.id;
            r.n_max = k;
            r.p_min = s.spec_p_min;
            r.temperature = s.chain->plain_draw() ? s.task->sampling.temperature : 0.0f;
            r.rng = &s.spec_rng;
            reqs.push_back(r);
            want_model.push_back({&s, i + 1});
            return;
        }
    };
    for (auto& s : slots_)
        if (s.decoding() && s.spec_on && s.pending >= 0) try_from(s, 0);
    if (reqs.empty()) return;
    for (size_t i = 0; i < reqs.size(); ++i) reqs[i].tokens = seqs[i];
    std::vector<engine::spec::DraftModel::Result> res;
    try {
        res = config_.draft_model->draft(reqs);
    } catch (const std::exception& e) {
        spdlog::warn("draft model failed: {}; decoding without its drafts this step", e.what());
        return;
    }
    // The cost of a drafted position, and apart from it the catch-up: after a pause (a new prompt, or
    // drafting off while it did not pay) the draft model first evaluates everything it missed, a one-off
    // prefill that, counted per position, made a draft model look many times slower than it is, so that
    // it never drafted again. A short catch-up is drafting's own steady cost (nearly every draft call
    // has one: a slot's last draft token, when accepted, was never evaluated by the draft model), priced
    // per call: without it, one-token drafts beside other streams looked cheaper than they are.
    const engine::spec::DraftModel::Timing& timing = config_.draft_model->last_timing();
    draft_cost_.observe((int32_t)reqs.size(), timing.catch_up_tokens, timing.catch_up_seconds, timing.positions,
                        timing.draft_seconds);
    for (size_t i = 0; i < res.size(); ++i) {
        Slot& s = *want_model[i].slot;
        if ((int32_t)res[i].tokens.size() < std::max(s.spec_n_min, 1)) {
            try_from(s, want_model[i].next);  // a later n-gram drafter may still have something
            continue;
        }
        s.draft = std::move(res[i].tokens);
        s.draft_q = std::move(res[i].q);
        s.draft_from = (int)DrafterType::DraftModel;
    }
}

bool Scheduler::run_iteration() {
    std::vector<SlotView> views;
    const std::vector<bool> admitted = admitted_prompts();
    for (const auto& s : slots_) {
        if (!s.busy() || s.swapped_out()) continue;
        SlotView v;
        v.id = s.id;
        v.generating = s.decoding();
        v.prompt_remaining = s.state == SlotState::ProcessingPrompt && admitted[(size_t)s.id]
                                 ? (int32_t)(s.task->prompt.size() - s.prompt_pos)
                                 : 0;
        v.arrival = s.task->id;
        v.n_draft = v.generating ? (int32_t)s.draft.size() : 0;
        views.push_back(v);
    }
    // Shared context: the step may take only the free cells (make_room left one per generating slot).
    uint32_t n_batch = ctx_.params().n_batch;
    if (config_.shared_context) n_batch = std::min(n_batch, free_cells());
    const BatchPlan plan = plan_iteration(views, Budget{n_batch, config_.max_prefill_tokens});
    if (plan.empty()) return false;
    std::vector<PlanEntry> entries = plan.entries;
    fit_lookahead(entries);
    uint32_t n_tokens = 0;
    for (const PlanEntry& e : entries) {
        Slot& s = slots_[(size_t)e.slot];
        n_tokens += (uint32_t)e.n_tokens;
        if (e.decode) {
            s.draft.resize((size_t)e.n_draft);
            if (!s.draft_q.empty()) s.draft_q.resize((size_t)e.n_draft);
        }
        if (!e.decode && s.prompt_pos == 0) s.t_start = Clock::now();
    }
    // Queued embeddings (a server that generates and embeds) share the step's decode call when they fit
    // beside it; otherwise they run on their own first. Not with LoRA adapters: the output matrix would
    // need per-row scales for the rows that skip it.
    EmbedRide ride;
    EmbedRide* riding = nullptr;
    if (!embed_queue_.empty() && ctx_.splits_hidden()) {
        const uint32_t n_free = n_batch - std::min(n_tokens, n_batch);
        if (ctx_.params().lora.empty() && ride_embeddings(n_free, ride)) {
            riding = &ride;
            for (const auto& t : ride.tasks)
                for (const auto& in : t->inputs) n_tokens += (uint32_t)in.size();
            metrics_.update([&](MetricsSnapshot& m) { m.embed_inputs_riding_total += ride.seqs.size(); });
        } else {
            run_embeddings();
        }
    }
    // The step's whole cost (decode, verification, sampling, delivery) feeds the draft controllers'
    // cost model: drafted rows cost more than their share of the decode call.
    const auto t0 = Clock::now();
    execute(entries, riding);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    int32_t n_streams = 0;
    bool prefill = false;
    for (const PlanEntry& e : entries) {
        n_streams += e.decode ? 1 : 0;
        prefill = prefill || !e.decode;
    }
    step_cost_.observe((double)n_tokens, seconds, n_streams);
    // Lookahead controllers compare iterations with and without their slot's window; iterations that
    // also prefill a prompt would blur that, so they are not counted.
    for (auto& s : slots_) {
        if (s.la_obs_level >= 0 && !prefill) s.la_ctl.observe(s.la_obs_level, s.la_obs_emitted, seconds, n_streams);
        s.la_obs_level = -1;
    }
    ++iteration_;
    return true;
}

void Scheduler::fit_lookahead(std::vector<PlanEntry>& entries) {
    engine::SeqId next = (engine::SeqId)config_.n_parallel;
    const engine::SeqId end = (engine::SeqId)ctx_.params().n_seq_max;
    for (PlanEntry& e : entries) {
        Slot& s = slots_[(size_t)e.slot];
        if (!e.decode || s.la_step.empty()) continue;
        // The plan may have granted fewer tokens than the step asked for (a crowded batch): the step
        // is rebuilt smaller (window first), down to a plain step.
        if ((int32_t)s.la_step.tokens.size() > e.n_draft || s.la_step.n_lanes() > end - next) {
            s.la_step = s.la.layout(s.pending, s.history, s.la_step.w, s.la_step.g, e.n_draft, end - next,
                                    draft_room(s), s.la_step.branch_len);
            s.draft = s.la_step.tokens;
        }
        e.n_draft = (int32_t)s.la_step.tokens.size();
        e.n_tokens = e.n_logits = 1 + e.n_draft;
        s.la_seqs.clear();
        for (int32_t k = 0; k < s.la_step.n_lanes(); ++k) s.la_seqs.push_back(next++);
        if (s.la_step.empty()) s.draft_from = -1;
    }
}

void Scheduler::clear_lanes(const std::vector<PlanEntry>& entries) {
    for (const PlanEntry& e : entries) {
        Slot& s = slots_[(size_t)e.slot];
        for (engine::SeqId q : s.la_seqs) ctx_.kv().seq_rm(q, -1, -1);
    }
}

void Scheduler::execute(const std::vector<PlanEntry>& entries, EmbedRide* ride) {
    engine::Batch batch;
    std::vector<size_t> first_row;  // batch index of each entry's first token
    for (const PlanEntry& e : entries) {
        Slot& s = slots_[(size_t)e.slot];
        first_row.push_back(batch.size());
        if (e.decode && !s.la_step.empty()) {
            // Every lane sees the slot's tokens and the input token, and only its own lane's tokens.
            const engine::Pos p0 = s.n_past();
            std::vector<engine::SeqId> all{s.id};
            for (engine::SeqId q : s.la_seqs) {
                ctx_.kv().seq_cp(s.id, q, 0, -1);
                if (!s.cache_lora.empty()) ctx_.set_lora_scales(q, s.cache_lora);
                all.push_back(q);
            }
            batch.add(s.pending, p0, all, true);
            const engine::spec::LookaheadLayout& l = s.la_step;
            std::vector<engine::SeqId> seqs;
            for (size_t k = 0; k < l.tokens.size(); ++k) {
                seqs.clear();
                for (int32_t lane : l.lanes[k]) seqs.push_back(s.la_seqs[(size_t)lane]);
                batch.add(l.tokens[k], p0 + l.pos[k], seqs, l.logits[k] != 0);
            }
        } else if (e.decode) {
            const engine::Pos p0 = s.n_past();
            batch.add(s.pending, p0, {s.id}, true);
            for (int32_t i = 0; i < e.n_draft; ++i) batch.add(s.draft[(size_t)i], p0 + 1 + i, {s.id}, true);
        } else {
            for (int32_t i = 0; i < e.n_tokens; ++i) {
                const size_t p = s.prompt_pos + (size_t)i;
                batch.add(s.task->prompt[p], (engine::Pos)p, {s.id}, i >= e.n_tokens - e.n_logits);
            }
        }
    }

    if (ride) {  // each embedding input on its own sequence, every token's hidden state kept
        size_t k = 0;
        for (const auto& t : ride->tasks)
            for (const auto& in : t->inputs) {
                ride->first_row.push_back(batch.size());
                const engine::SeqId seq = ride->seqs[k++];
                for (size_t i = 0; i < in.size(); ++i) batch.add_hidden(in[i], (engine::Pos)i, seq);
            }
    }

    const auto t0 = Clock::now();
    engine::Context::Status st = engine::Context::Status::Ok;
    std::string error;
    try {
        st = decode_with_eviction(batch);
    } catch (const std::exception& e) {
        error = e.what();
        rollback(entries);
    }
    if (!error.empty() || st != engine::Context::Status::Ok) {
        clear_lanes(entries);
        if (ride) {  // the embeddings go back to the queue; the entries are retried without them
            for (engine::SeqId q : ride->seqs) ctx_.kv().seq_rm(q, -1, -1);
            embed_queue_.put_back(std::move(ride->tasks));
        }
    }
    if (error.empty() && st == engine::Context::Status::Ok) {
        record_decode(entries, batch.size(), std::chrono::duration<double>(Clock::now() - t0).count());
        if (ride) finish_ride(*ride);
        for (size_t k = 0; k < entries.size(); ++k) apply_entry(entries[k], first_row[k]);
        clear_lanes(entries);  // steps that were not applied (a slot failed or gone) leave no lane behind
        return;
    }
    if (entries.size() > 1) {
        spdlog::warn("a batch of {} entries failed ({}); evaluating them one by one", entries.size(),
                     error.empty() ? "no KV space" : error);
        for (const PlanEntry& e : entries) execute({e});
        return;
    }
    const PlanEntry& e = entries[0];
    Slot& s = slots_[(size_t)e.slot];
    if (e.decode && e.n_draft > 0) {  // the draft is optional: try the plain step
        PlanEntry plain = e;
        plain.n_tokens = plain.n_logits = 1;
        plain.n_draft = 0;
        s.draft.clear();
        s.draft_q.clear();
        s.la_step = {};
        s.la_seqs.clear();
        s.draft_from = -1;
        execute({plain});
        return;
    }
    if (!error.empty()) {
        spdlog::error("slot {}: decode failed: {}", s.id, error);
        fail(s, 500, "internal error: " + error);
    } else {
        fail(s, 503, "the KV cache is full; try again later or increase the context size");
    }
}

void Scheduler::rollback(const std::vector<PlanEntry>& entries) {
    for (const PlanEntry& e : entries) {
        const Slot& s = slots_[(size_t)e.slot];
        ctx_.kv().seq_rm(s.id, e.decode ? s.n_past() : (engine::Pos)s.prompt_pos, -1);
    }
}

void Scheduler::record_decode(const std::vector<PlanEntry>& entries, size_t n_tokens, double seconds) {
    uint32_t n_prefill = 0, n_decode = 0, n_chunks = 0;
    for (const PlanEntry& e : entries) {
        if (e.decode) {
            n_decode += (uint32_t)e.n_tokens;
        } else {
            n_prefill += (uint32_t)e.n_tokens;
            ++n_chunks;
        }
    }
    uint32_t busy = 0;
    for (const auto& s : slots_) busy += s.busy() ? 1 : 0;
    metrics_.update([&](MetricsSnapshot& m) {
        ++m.n_decode_total;
        ++m.iterations_total;
        m.n_busy_slots_total += busy;
        if (n_decode > 0 && n_prefill > 0) ++m.mixed_iterations_total;
        m.prompt_tokens_total += n_prefill;
        m.prompt_chunks_total += n_chunks;
        // Attribute decode time to prompt and generation in proportion to their tokens.
        const double total = (double)n_tokens;
        m.prompt_seconds_total += seconds * n_prefill / total;
        m.predicted_seconds_total += seconds * n_decode / total;
    });
}

void Scheduler::apply_entry(const PlanEntry& e, size_t first_row) {
    Slot& s = slots_[(size_t)e.slot];
    if (!s.busy()) return;
    try {
        if (e.decode) {
            step_decode(s, e, first_row);
        } else {
            step_prompt(s, e, first_row);
        }
    } catch (const engine::spec::NoTokenError& err) {
        fail(s, 400, std::string("no token can be sampled: ") + err.what());
    } catch (const engine::spec::RejectedTextError& err) {
        fail(s, 400, std::string("the generated text breaks the request's constraint: ") + err.what());
    } catch (const engine::GrammarBudgetError& err) {
        fail(s, 400, err.what());
    } catch (const std::exception& err) {
        spdlog::error("slot {}: request {} failed: {}", s.id, s.task ? s.task->id : 0, err.what());
        fail(s, 500, std::string("internal error: ") + err.what());
    }
}

void Scheduler::step_lookahead(Slot& s, size_t first_row) {
    const int32_t n_past = s.n_past();
    const engine::Token x = s.pending;
    const engine::spec::LookaheadLayout l = std::move(s.la_step);
    std::vector<engine::SeqId> lanes = std::move(s.la_seqs);
    s.la_step = {};
    s.la_seqs.clear();
    s.cache_tokens.push_back(x);
    ++s.timings.decode_iterations;
    // The lanes leave the cache before the tokens are delivered (a context shift must find the slot's
    // cells unshared), and also when sampling throws.
    struct LaneGuard {
        engine::KvCache& kv;
        std::vector<engine::SeqId>& lanes;
        void release() {
            for (engine::SeqId q : lanes) kv.seq_rm(q, -1, -1);
            lanes.clear();
        }
        ~LaneGuard() { release(); }
    } guard{ctx_.kv(), lanes};
    const Task& t = *s.task;
    const engine::spec::ProbsOptions po{t.sampling.n_probs, t.post_sampling_probs};
    std::vector<std::vector<const float*>> rows(l.branches.size());
    for (size_t b = 0; b < l.branches.size(); ++b)
        for (size_t i = 0; i < l.branches[b].size(); ++i)
            rows[b].push_back(ctx_.logits(first_row + (size_t)l.branch_first[b] + i));
    int32_t followed = -1;
    engine::spec::Verified v =
        engine::spec::verify_tree_by_sampling(*s.chain, ctx_.logits(first_row), l.branches, rows, po, &followed);
    const size_t n_acc = v.n_accepted();
    if (s.la_gated) s.la_gate.observe(l.match, l.branch_len, (int32_t)n_acc);
    if (n_acc > 0)
        ctx_.kv().seq_cp(lanes[(size_t)(l.w + followed)], s.id, n_past + 1, n_past + 1 + (engine::Pos)n_acc);
    s.cache_tokens.insert(s.cache_tokens.end(), v.tokens.begin(), v.tokens.begin() + (long)n_acc);
    // The window's next guesses: the target's greedy pick after each column's chain.
    const int n_vocab = ctx_.n_vocab();
    std::vector<engine::Token> next((size_t)l.w);
    for (int32_t i = 0; i < l.w; ++i) {
        const float* row = ctx_.logits(first_row + (size_t)l.window_rows[(size_t)i]);
        next[(size_t)i] = (engine::Token)(std::max_element(row, row + n_vocab) - row);
    }
    guard.release();
    s.la.update(l, x, next, v.tokens, s.history);
    s.la_obs_level = s.la_level;
    s.la_obs_emitted = (int32_t)v.tokens.size();
    const size_t kind = (size_t)engine::spec::DrafterType::Lookahead;
    s.la_steps += 1;
    s.la_evaluated += (int64_t)l.tokens.size();
    s.la_accepted += (int64_t)n_acc;
    count_draft(s, kind, l.tokens.size(), n_acc);
    note_pace(s, v.tokens.size());
    deliver(s, std::move(v));
}

void Scheduler::count_draft(Slot& s, size_t kind, size_t n_drafted, size_t n_accepted) {
    s.timings.draft_n += (int32_t)n_drafted;
    s.timings.draft_n_accepted += (int32_t)n_accepted;
    metrics_.update([&](MetricsSnapshot& m) {
        m.draft_tokens_total[kind] += n_drafted;
        m.draft_accepted_total[kind] += n_accepted;
        ++m.draft_steps_total[kind];
    });
}

void Scheduler::step_decode(Slot& s, const PlanEntry& e, size_t first_row) {
    if (!s.la_step.empty()) {
        step_lookahead(s, first_row);
        return;
    }
    const bool plain_step = s.draft.empty();
    const int32_t n_past = s.n_past();
    s.cache_tokens.push_back(s.pending);
    ++s.timings.decode_iterations;
    std::vector<const float*> rows;
    for (int32_t i = 0; i < e.n_tokens; ++i) rows.push_back(ctx_.logits(first_row + (size_t)i));
    const Task& t = *s.task;
    const engine::spec::ProbsOptions po{t.sampling.n_probs, t.post_sampling_probs};
    engine::spec::Verified v =
        !s.draft.empty() && s.draft_q.size() == s.draft.size()
            ? engine::spec::verify_by_ratio(*s.chain, rows, s.draft, s.draft_q, s.spec_rng, po)
            : engine::spec::verify_by_sampling(*s.chain, rows, s.draft, po);
    // Accepted draft tokens stay in the cache; the rejected ones leave it.
    const size_t n_acc = v.n_accepted();
    if (!s.draft.empty() && s.draft_from >= 0) {
        const size_t kind = (size_t)s.draft_from;
        s.draft_ctl[kind].observe((int32_t)s.draft.size(), (int32_t)n_acc);
        count_draft(s, kind, s.draft.size(), n_acc);
    }
    s.draft_q.clear();
    s.cache_tokens.insert(s.cache_tokens.end(), s.draft.begin(), s.draft.begin() + (long)n_acc);
    if (n_acc < s.draft.size()) ctx_.kv().seq_rm(s.id, n_past + 1 + (engine::Pos)n_acc, -1);
    s.draft.clear();
    // The lookahead window moves along with the tokens another drafter or a plain step emitted.
    if (s.la_on) {
        s.la.update({}, s.pending, {}, v.tokens, s.history);
        if (plain_step) {  // what a plain step gives, for the lookahead controller's comparison
            s.la_obs_level = 0;
            s.la_obs_emitted = (int32_t)v.tokens.size();
        }
    }
    note_pace(s, v.tokens.size());
    deliver(s, std::move(v));
}

void Scheduler::note_pace(Slot& s, size_t n_tokens) {
    // About the last twenty steps; while its drafts are held back, about the last hundred: those steps
    // say little of the pace it drafts at, but a pace that no longer holds (a repetition that ended) must
    // not keep the slot held back to the end of its reply.
    const double decay = s.ahead ? 0.99 : 0.95;
    s.pace = decay * s.pace + (1.0 - decay) * (double)n_tokens;
}

void Scheduler::step_prompt(Slot& s, const PlanEntry& e, size_t first_row) {
    s.cache_tokens.insert(s.cache_tokens.end(), s.task->prompt.begin() + (long)s.prompt_pos,
                          s.task->prompt.begin() + (long)s.prompt_pos + e.n_tokens);
    s.prompt_pos += (size_t)e.n_tokens;
    s.timings.prompt_n += e.n_tokens;
    ++s.timings.prompt_chunks;
    if (s.task->return_progress) {
        TokenOutput progress;
        progress.progress = PromptProgress{(int32_t)s.task->prompt.size(), s.n_cached, (int32_t)s.prompt_pos,
                                           ms_between(s.t_start, Clock::now())};
        progress.n_prompt_tokens = (int32_t)s.task->prompt.size();
        progress.n_cached_tokens = s.n_cached;
        progress.slot_id = s.id;
        s.task->sink->on_tokens(progress);
    }
    if (!e.finishes_prompt) return;
    s.state = SlotState::DonePrompt;
    s.t_prompt_done = Clock::now();
    s.timings.prompt_ms = ms_between(s.t_start, s.t_prompt_done);
    const float* row = ctx_.logits(first_row + (size_t)e.n_tokens - 1);
    const Task& t = *s.task;
    deliver(s, engine::spec::verify_by_sampling(*s.chain, std::span<const float* const>(&row, 1), {},
                                                {t.sampling.n_probs, t.post_sampling_probs}));
}

void Scheduler::deliver(Slot& slot, engine::spec::Verified&& v) {
    Task& t = *slot.task;
    const auto now = Clock::now();
    const int32_t n_before = slot.n_decoded();
    // t_max_predict_ms: once a new line has been generated, generating may take at most this long. The
    // step's tokens all arrive now: past the deadline, generation ends at the first of them after which
    // there is a new line, where one token per step would have ended.
    const bool past_deadline = t.t_max_predict_ms > 0 &&
                               ms_between(slot.t_prompt_done, now) > t.t_max_predict_ms;
    const TokenPipeline::Step step = slot.pipeline->push(v.tokens, past_deadline);
    slot.history.insert(slot.history.end(), v.tokens.begin(), v.tokens.begin() + (long)step.n_consumed);
    if (n_before == 0) {
        slot.timings.ttft_ms = ms_between(t.arrival, now);
        metrics_.observe_ttft(slot.timings.ttft_ms / 1000.0);
    }
    // Tokens of one step arrive together: each counts the step's gap spread evenly.
    const size_t n_itl = step.n_consumed - (n_before == 0 ? 1 : 0);
    const double gap = n_before == 0 ? 0.0 : std::chrono::duration<double>(now - slot.t_last_token).count();
    for (size_t i = 0; i < n_itl; ++i) metrics_.observe_itl(gap / (double)step.n_consumed);
    slot.t_last_token = now;
    metrics_.update([&](MetricsSnapshot& m) {
        m.tokens_predicted_total += step.n_consumed;
        // The tokens the slot's cache holds, as llama-server counts them (the token just sampled is not in it).
        m.n_tokens_max = std::max<uint64_t>(m.n_tokens_max, (uint64_t)slot.n_past());
    });

    // The step's tokens wait with the text the pipeline holds back; those it released go out now.
    const long n_held = (long)step.n_shown + (step.end && step.end->eos ? 1 : 0);
    slot.held_tokens.insert(slot.held_tokens.end(), v.tokens.begin(), v.tokens.begin() + n_held);
    if (!v.probs.empty()) slot.held_probs.insert(slot.held_probs.end(), v.probs.begin(), v.probs.begin() + n_held);
    TokenOutput out;
    out.text = step.text;
    if (t.timings_per_token) {
        Timings now_t = slot.timings;
        now_t.predicted_n = slot.n_decoded();
        now_t.predicted_ms = ms_between(slot.t_prompt_done, now);
        out.timings = now_t;
    }
    if (step.end) {
        finish(slot, *step.end, std::move(out));
        return;
    }
    take_held(slot, out, slot.pipeline->n_released() - slot.n_released);
    out.n_decoded = slot.n_decoded();
    out.n_prompt_tokens = (int32_t)t.prompt.size();
    out.n_cached_tokens = slot.n_cached;
    out.slot_id = slot.id;
    if (!out.tokens.empty() || !out.text.empty()) t.sink->on_tokens(out);
    // The last token still has to be evaluated next step: it needs a cell of the slot's share.
    // Requests without a limit end at the context, as llama-server's do, rather than shift forever.
    if (slot.n_past() + 1 >= n_ctx_slot_) {
        if (!config_.context_shift || t.n_predict < 0 || !shift_context(slot)) {
            slot.truncated = true;  // cut short by the context, as llama-server reports it
            finish(slot, PipelineEnd{FinishReason::Length, false, ""});
            return;
        }
    }
    slot.pending = v.tokens.back();
    slot.state = SlotState::Generating;
}

bool Scheduler::shift_context(Slot& slot) {
    const Task& t = *slot.task;
    const engine::Token bos = model_.vocab().bos();
    const bool has_bos = bos >= 0 && !t.prompt.empty() && t.prompt[0] == bos;
    const int32_t n_keep = t.n_keep < 0 ? (int32_t)t.prompt.size() : t.n_keep + (has_bos ? 1 : 0);
    int32_t n_discard;
    try {
        n_discard = engine::shift_context(ctx_.kv(), slot.id, slot.cache_tokens, n_keep, t.n_discard);
    } catch (const std::runtime_error&) {
        // Shared cells need copies and the cache is full: idle slots' cached prompts make room.
        for (auto& s : slots_)
            if (!s.busy()) forget_cache(s);
        try {
            n_discard = engine::shift_context(ctx_.kv(), slot.id, slot.cache_tokens, n_keep, t.n_discard);
        } catch (const std::runtime_error& e) {
            spdlog::warn("slot {}: no context shift: {}", slot.id, e.what());
            return false;
        }
    }
    if (n_discard == 0) return false;
    slot.truncated = true;
    spdlog::debug("slot {}: context shift, kept {}, discarded {}, {} left", slot.id, n_keep, n_discard,
                  slot.cache_tokens.size());
    return true;
}

void Scheduler::take_held(Slot& slot, TokenOutput& out, size_t n) {
    n = std::min(n, slot.held_tokens.size());
    out.tokens.insert(out.tokens.end(), slot.held_tokens.begin(), slot.held_tokens.begin() + (long)n);
    slot.held_tokens.erase(slot.held_tokens.begin(), slot.held_tokens.begin() + (long)n);
    if (!slot.held_probs.empty()) {
        out.probs.insert(out.probs.end(), slot.held_probs.begin(), slot.held_probs.begin() + (long)n);
        slot.held_probs.erase(slot.held_probs.begin(), slot.held_probs.begin() + (long)n);
    }
    slot.n_released += n;
}

void Scheduler::finish(Slot& slot, const PipelineEnd& end, TokenOutput out) {
    Task& t = *slot.task;
    // Text the decoder or the stop matcher still holds is shown, unless a stop string ended generation;
    // the tokens held with it go too, then the ending EOS. A stop string's tokens are left out (as
    // llama-server and OpenAI leave them out of the probabilities).
    if (end.word.empty()) out.text += slot.pipeline->flush();
    const size_t n_released = slot.pipeline->n_released();
    take_held(slot, out, n_released - slot.n_released);
    if (end.eos) {
        take_held(slot, out, slot.held_tokens.size());  // the EOS, after every pipeline token
        out.ends_with_eos = true;
    }
    out.n_decoded = slot.n_decoded();
    out.n_prompt_tokens = (int32_t)t.prompt.size();
    out.n_cached_tokens = slot.n_cached;
    out.slot_id = slot.id;
    if (!out.tokens.empty() || !out.text.empty()) t.sink->on_tokens(out);
    FinalOutput f;
    f.finish = end.reason;
    f.stopped_eos = end.eos;
    f.stopped_word = !end.word.empty();
    f.stopped_limit = end.reason == FinishReason::Length;
    f.stopping_word = end.word;
    slot.last_stopping_word = end.word;
    f.content = slot.pipeline->content();
    f.tokens.assign(slot.pipeline->tokens().begin(), slot.pipeline->tokens().begin() + (long)n_released);
    if (end.eos) f.tokens.push_back(slot.history.back());  // the EOS: consumed, not shown
    f.n_prompt_tokens = (int32_t)t.prompt.size();
    f.n_cached_tokens = slot.n_cached;
    f.truncated = slot.truncated;
    f.slot_id = slot.id;
    slot.timings.predicted_n = slot.n_decoded();
    slot.timings.predicted_ms = ms_between(slot.t_prompt_done, Clock::now());
    f.timings = slot.timings;
    for (auto& d : slot.drafters) d->end(slot.history);
    if (slot.la_on) slot.la.end(slot.history);
    // The slot is idle in /slots and the metrics before the client hears that its request is done.
    const std::shared_ptr<Task> task = slot.task;
    release(slot);
    update_gauges();
    task->sink->on_done(f);
}

void Scheduler::update_gauges() {
    int processing = 0;
    uint64_t pool_ngrams = 0;
    for (const auto& s : slots_) processing += s.busy() ? 1 : 0;
    std::vector<SlotInfo> snap(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
        const Slot& s = slots_[i];
        SlotInfo& si = snap[i];
        si.id = s.id;
        si.state = s.state;
        si.n_ctx = n_ctx_slot_;
        si.n_past = s.n_past();
        if (s.task) {
            si.task_id = s.task->id;
            si.n_prompt_tokens = (int32_t)s.task->prompt.size();
            si.n_prompt_tokens_processed = (int32_t)s.prompt_pos;
            si.prompt_chunks = s.timings.prompt_chunks;
            si.n_decoded = s.n_decoded();
            si.n_predict = s.task->n_predict;
            si.speculative = s.spec_on;
            si.draft_n = s.timings.draft_n;
            si.draft_n_accepted = s.timings.draft_n_accepted;
            if (s.la_on) {
                si.la = s.la.params();
                si.la_fixed = s.la_fixed;
                si.la_pool = s.la.pool().size();
                si.la_steps = s.la_steps;
                si.la_evaluated = s.la_evaluated;
                si.la_accepted = s.la_accepted;
                pool_ngrams += si.la_pool;
            }
            si.has_new_line = s.pipeline && s.pipeline->has_new_line();
            si.task = s.task;
        } else {
            si.stopping_word = s.last_stopping_word;
        }
    }
    const auto& kv = ctx_.kv();
    size_t deferred;
    {
        std::lock_guard<std::mutex> lk(mu_);
        snapshot_ = std::move(snap);
        deferred = queue_.size();
    }
    metrics_.update([&](MetricsSnapshot& m) {
        m.requests_processing = processing;
        m.requests_deferred = (int)deferred;
        m.kv_cache_tokens = kv.n_used();
        m.lookahead_pool_ngrams = pool_ngrams;
        m.kv_cache_usage_ratio = (double)kv.n_used() / (double)kv.size();
    });
}

}  // namespace sched
