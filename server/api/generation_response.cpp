#include "server/api/generation_response.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "engine/chat/harmony.h"
#include "server/http/errors.h"
#include "server/http/response.h"
#include "server/http/sse.h"

namespace api {

// The engine thread's side: each call copies the plain output and queues its formatting.
class ChoiceSink : public sched::TaskSink {
public:
    ChoiceSink(std::shared_ptr<GenerationResponse> r, size_t i) : r_(std::move(r)), i_(i) {}
    void on_tokens(const sched::TokenOutput& out) override {
        r_->post([r = r_, i = i_, out] { r->on_tokens(i, out); });
    }
    void on_done(const sched::FinalOutput& out) override {
        r_->post([r = r_, i = i_, out] { r->on_done(i, out); });
    }
    void on_error(int status, const std::string& message) override {
        r_->post([r = r_, i = i_, status, message] { r->on_error(i, status, message); });
    }

private:
    std::shared_ptr<GenerationResponse> r_;
    size_t i_;
};

namespace {

const char* finish_name(sched::FinishReason f) { return f == sched::FinishReason::Stop ? "stop" : "length"; }

// A reply that stopped on its own after tool calls finished because of them.
const char* chat_finish_name(sched::FinishReason f, bool has_tool_calls) {
    return has_tool_calls && f == sched::FinishReason::Stop ? "tool_calls" : finish_name(f);
}

json bytes_of(const std::string& s) {
    json b = json::array();
    for (unsigned char c : s) b.push_back((int)c);
    return b;
}

// JSON cannot hold -inf: a banned token's log-probability is reported as a very large negative number.
double finite_logprob(float lp) { return std::isfinite(lp) ? (double)lp : -9999.0; }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// llama-server's response_fields: keep the named fields; "a/b" takes b out of object a and names it
// "a/b" at the top. A field that does not exist is left out.
json select_fields(const json& res, const std::vector<std::string>& fields) {
    json out = json::object();
    for (const std::string& f : fields) {
        const json* at = &res;
        size_t start = 0;
        while (at) {
            const size_t slash = f.find('/', start);
            const std::string key = f.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
            at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
            if (slash == std::string::npos) break;
            start = slash + 1;
        }
        if (at) out[f] = *at;
    }
    return out;
}

}  // namespace

GenerationResponse::GenerationResponse(ResponseContext rc, const engine::Vocab& vocab, size_t n_choices,
                                       std::shared_ptr<FormatPool::Serial> serial)
    : rc_(std::move(rc)), vocab_(vocab), serial_(std::move(serial)), choices_(n_choices) {}

void GenerationResponse::post(std::function<void()> fn) {
    auto guarded = [self = shared_from_this(), fn = std::move(fn)] {
        try {
            fn();
        } catch (const std::exception& e) {
            spdlog::error("formatting response {} failed: {}", self->rc_.id, e.what());
            self->on_error(0, 500, std::string("internal error: ") + e.what());
        }
    };
    if (serial_) {
        serial_->post(std::move(guarded));
    } else {
        guarded();
    }
}

void GenerationResponse::set_stream(std::shared_ptr<server::http::StreamWriter> w) { stream_ = std::move(w); }
void GenerationResponse::set_deferred(std::shared_ptr<server::http::DeferredResponse> d) { deferred_ = std::move(d); }

std::shared_ptr<sched::TaskSink> GenerationResponse::sink(size_t index) {
    return std::make_shared<ChoiceSink>(shared_from_this(), index);
}

json GenerationResponse::chunk_base(const char* object) const {
    return json{{"id", rc_.id}, {"object", object}, {"created", rc_.created}, {"model", rc_.model_name},
                {"system_fingerprint", "ggserve"}};
}

json GenerationResponse::timings_json(const sched::Timings& t) const {
    return json{{"cache_n", t.cache_n},
                {"prompt_n", t.prompt_n},
                {"prompt_ms", t.prompt_ms},
                {"prompt_per_token_ms", t.prompt_n ? t.prompt_ms / t.prompt_n : 0.0},
                {"prompt_per_second", t.prompt_ms > 0 ? 1000.0 * t.prompt_n / t.prompt_ms : 0.0},
                {"predicted_n", t.predicted_n},
                {"predicted_ms", t.predicted_ms},
                {"predicted_per_token_ms", t.predicted_n ? t.predicted_ms / t.predicted_n : 0.0},
                {"predicted_per_second", t.predicted_ms > 0 ? 1000.0 * t.predicted_n / t.predicted_ms : 0.0},
                {"ttft_ms", t.ttft_ms},
                {"queue_ms", t.queue_ms},
                {"prompt_chunks", t.prompt_chunks},
                {"decode_iterations", t.decode_iterations},
                {"draft_n", t.draft_n},
                {"draft_n_accepted", t.draft_n_accepted}};
}

json GenerationResponse::usage_json() const {
    int64_t prompt = 0, completion = 0, cached = 0;
    for (size_t i = 0; i < choices_.size(); ++i) {
        const auto& f = choices_[i].final;
        // n > 1 repeats the same prompt: it is counted once, as OpenAI does.
        // Its cached part likewise: the first completion's (the others found the prompt it left cached).
        if (i % rc_.choices_per_prompt == 0) {
            prompt += f.n_prompt_tokens;
            cached += f.n_cached_tokens;
        }
        completion += f.timings.predicted_n;
    }
    return json{{"prompt_tokens", prompt},
                {"completion_tokens", completion},
                {"total_tokens", prompt + completion},
                {"prompt_tokens_details", {{"cached_tokens", cached}}}};
}

// Per-token probabilities in the shape each API uses.
json GenerationResponse::probs_json(std::span<const engine::TokenProbs> probs) const {
    json out = json::array();
    const bool post = rc_.options.post_sampling_probs;
    for (const auto& p : probs) {
        const std::string piece = vocab_.token_to_piece(p.chosen.token);
        if (rc_.flavor == Flavor::Native) {
            json top = json::array();
            for (const auto& t : p.top) {
                const std::string tp = vocab_.token_to_piece(t.token);
                json e{{"id", t.token}, {"token", tp}, {"bytes", bytes_of(tp)}};
                if (post) e["prob"] = t.prob;
                else e["logprob"] = finite_logprob(t.logprob);
                top.push_back(e);
            }
            json e{{"id", p.chosen.token}, {"token", piece}, {"bytes", bytes_of(piece)}};
            if (post) {
                e["prob"] = p.chosen.prob;
                e["top_probs"] = top;
            } else {
                e["logprob"] = finite_logprob(p.chosen.logprob);
                e["top_logprobs"] = top;
            }
            out.push_back(e);
        } else {
            json top = json::array();
            for (size_t k = 0; k < p.top.size() && (int)k < rc_.options.top_logprobs; ++k) {
                const std::string tp = vocab_.token_to_piece(p.top[k].token);
                top.push_back({{"id", p.top[k].token},
                               {"token", tp},
                               {"logprob", finite_logprob(p.top[k].logprob)},
                               {"bytes", bytes_of(tp)}});
            }
            out.push_back({{"id", p.chosen.token},
                           {"token", piece},
                           {"logprob", finite_logprob(p.chosen.logprob)},
                           {"bytes", bytes_of(piece)},
                           {"top_logprobs", top}});
        }
    }
    return out;
}

// /v1/completions logprobs: OpenAI's legacy arrays (what OpenAI's SDKs read) and, beside them, the
// chat-style entries under "content" (what llama-server 2026 sends there), so clients of either work.
static json legacy_logprobs(const json& entries) {
    json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
    size_t offset = 0;
    for (const auto& e : entries) {
        tokens.push_back(e["token"]);
        token_logprobs.push_back(e["logprob"]);
        json m = json::object();
        for (const auto& t : e["top_logprobs"]) m[t["token"].get<std::string>()] = t["logprob"];
        top.push_back(m);
        offsets.push_back(offset);
        offset += e["token"].get<std::string>().size();
    }
    return json{{"tokens", tokens},
                {"token_logprobs", token_logprobs},
                {"top_logprobs", top},
                {"text_offset", offsets},
                {"content", entries}};
}

void GenerationResponse::send(const json& j) {
    if (stream_) emit(dump(j));
}

void GenerationResponse::emit(std::string_view data, std::string_view event) {
    std::string bytes = server::http::format_sse_event(data, event);
    if (session_) session_->append(bytes);
    stream_->write(std::move(bytes));
}

void GenerationResponse::stop() {
    post([self = shared_from_this()] {
        if (self->failed_ || !self->stream_) return;
        self->failed_ = true;  // tokens still on their way are dropped
        self->end_stream();
    });
}

void GenerationResponse::end_stream() {
    if (session_) session_->finish();
    stream_->close();
}

void GenerationResponse::send_progress(size_t i, const sched::TokenOutput& out) {
    const sched::PromptProgress& p = *out.progress;
    const json progress{{"total", p.total}, {"cache", p.cache}, {"processed", p.processed}, {"time_ms", p.time_ms}};
    if (rc_.flavor == Flavor::Native) {
        send({{"index", i},
              {"content", ""},
              {"tokens", json::array()},
              {"stop", false},
              {"id_slot", out.slot_id},
              {"tokens_predicted", 0},
              {"tokens_evaluated", out.n_prompt_tokens},
              {"prompt_progress", progress}});
        return;
    }
    // An empty choice rides along, as llama-server sends it: clients read choices[0] of every chunk.
    const bool chat = rc_.flavor == Flavor::Chat;
    json j = chunk_base(chat ? "chat.completion.chunk" : "text_completion");
    json choice{{"index", i}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
    if (chat) choice["delta"] = {{"role", "assistant"}, {"content", nullptr}};
    else choice["text"] = "";
    j["choices"] = json::array({choice});
    j["prompt_progress"] = progress;
    send(j);
}

void GenerationResponse::begin() {
    if (!rc_.agent || !stream_ || rc_.agent->opens_after_prompt()) return;
    post([self = shared_from_this()] { self->agent_start(0); });
}

void GenerationResponse::agent_start(int64_t cached_tokens) {
    if (agent_started_) return;
    agent_started_ = true;
    send_events(rc_.agent->start(cached_tokens));
}

void GenerationResponse::send_events(const std::vector<ReplyEvent>& events) {
    for (const auto& e : events) emit(dump(e.data), e.name);
}

void GenerationResponse::agent_tokens(size_t i, const sched::TokenOutput& out) {
    if (!stream_ || out.progress) return;
    agent_start(out.n_cached_tokens);
    Choice& c = choices_[i];
    if (!c.parser) c.parser = std::make_unique<ChatStreamParser>(rc_.parse, rc_.tool_triggers);
    // The agent APIs send a call whole at the end (from the parsed reply); here only text goes out.
    const auto d = c.parser->feed(out.text);
    if (!d.reasoning.empty() || !d.content.empty()) send_events(rc_.agent->delta(d.reasoning, d.content));
}

// Generated tokens spent on the reasoning block: those whose text starts before the block ends.
static int64_t reasoning_tokens(const sched::FinalOutput& f, const engine::chat::ParseOptions& o,
                                const engine::Vocab& vocab) {
    if (!o.extract_reasoning) return 0;
    size_t end = 0;
    if (o.harmony) {
        // gpt-oss: up to the end of its last analysis message.
        for (const auto& m : engine::chat::split_harmony(f.content))
            if (m.has_body && m.channel == "analysis" && engine::chat::harmony_function(m).empty()) end = m.text_end;
        if (end == 0) return 0;
    } else {
        const auto [reasoning, rest] =
            engine::chat::split_reasoning(f.content, o.reasoning_opened_in_prompt, o.reasoning_tags);
        if (reasoning.empty() || rest.size() > f.content.size()) return 0;
        end = f.content.size() - rest.size();
    }
    size_t pos = 0;
    int64_t n = 0;
    for (engine::Token t : f.tokens) {
        if (pos >= end) break;
        pos += vocab.token_to_piece(t).size();
        ++n;
    }
    return n;
}

void GenerationResponse::agent_done(size_t i, const sched::FinalOutput& f) {
    Choice& c = choices_[i];
    c.done = true;
    c.final = f;
    ++n_done_;
    ReplyEnd end;
    end.finish = f.finish;
    end.stopped_word = f.stopped_word;
    end.stopping_word = f.stopping_word;
    end.input_tokens = f.n_prompt_tokens;
    end.cached_tokens = f.n_cached_tokens;
    end.output_tokens = f.timings.predicted_n;
    end.reasoning_tokens = reasoning_tokens(f, rc_.parse, vocab_);
    if (stream_) {
        agent_start(f.n_cached_tokens);
        if (!c.parser) c.parser = std::make_unique<ChatStreamParser>(rc_.parse, rc_.tool_triggers);
        const auto fin = c.parser->finish(f.finish == sched::FinishReason::Length);
        end.parsed = fin.parsed;
        if (!fin.delta.reasoning.empty() || !fin.delta.content.empty())
            send_events(rc_.agent->delta(fin.delta.reasoning, fin.delta.content));
        send_events(rc_.agent->finish(end));
        end_stream();
    } else {
        end.parsed = parse_reply(f.content, rc_.parse, rc_.tool_triggers, f.finish == sched::FinishReason::Length);
        deferred_->respond(server::http::Response::json(rc_.agent->body(end)));
    }
}

void GenerationResponse::on_tokens(size_t i, const sched::TokenOutput& out) {
    if (failed_) return;
    if (rc_.agent) return agent_tokens(i, out);
    Choice& c = choices_[i];
    if (out.progress) {
        if (stream_) send_progress(i, out);
        return;
    }
    const bool want_probs = rc_.flavor == Flavor::Native ? rc_.options.sampling.n_probs > 0 : rc_.options.logprobs;
    // The ending EOS: its probabilities are reported by the native API only (OpenAI's logprobs list the
    // tokens of the text).
    std::span<const engine::TokenProbs> shown(out.probs);
    if (out.ends_with_eos && rc_.flavor != Flavor::Native && !shown.empty()) shown = shown.first(shown.size() - 1);
    json probs = want_probs && !shown.empty() ? probs_json(shown) : json();
    if (!stream_) {
        if (!probs.is_null())
            for (auto& p : probs) c.logprobs.push_back(p);
        return;
    }
    const bool has_text = !out.text.empty();
    if (!has_text && probs.is_null() && !(rc_.flavor == Flavor::Native && !out.tokens.empty()))
        return;
    const json timings = out.timings ? timings_json(*out.timings) : json();
    switch (rc_.flavor) {
        case Flavor::Native: {
            // llama-server's partial result: the step's text and tokens, and the counts so far.
            json j{{"index", i},
                   {"content", out.text},
                   {"tokens", out.tokens},
                   {"stop", false},
                   {"id_slot", out.slot_id},
                   {"tokens_predicted", out.n_decoded},
                   {"tokens_evaluated", out.n_prompt_tokens}};
            if (!timings.is_null()) j["timings"] = timings;
            if (!probs.is_null()) j["completion_probabilities"] = probs;
            send(j);
            break;
        }
        case Flavor::Completions: {
            std::string text = out.text;
            if (!c.started) {  // echo: the prompt comes first
                c.started = true;
                if (rc_.options.echo && i < rc_.prompt_texts.size()) text = rc_.prompt_texts[i] + text;
            }
            json ch{{"text", text}, {"index", i}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
            if (!probs.is_null()) ch["logprobs"] = legacy_logprobs(probs);
            json j = chunk_base("text_completion");
            j["choices"] = json::array({ch});
            if (!timings.is_null()) j["timings"] = timings;
            send(j);
            break;
        }
        case Flavor::Chat: {
            if (!c.started) {
                c.started = true;
                json j = chunk_base("chat.completion.chunk");
                j["choices"] = json::array({{{"index", i},
                                             {"delta", {{"role", "assistant"}, {"content", ""}}},
                                             {"logprobs", nullptr},
                                             {"finish_reason", nullptr}}});
                send(j);
            }
            // Log-probabilities travel with the text of their tokens: while text is held back (a partial
            // character, a possible tag), they wait for the chunk that carries it.
            if (!probs.is_null())
                for (auto& p : probs) c.pending_probs.push_back(std::move(p));
            if (!rc_.parse_chat) {
                if (out.text.empty()) break;
                send_chat_delta(i, {{"content", out.text}}, c.pending_probs.empty() ? json() : c.pending_probs,
                                timings);
                c.pending_probs = json::array();
                break;
            }
            if (!c.parser) c.parser = std::make_unique<ChatStreamParser>(rc_.parse, rc_.tool_triggers);
            send_parsed_delta(i, c.parser->feed(out.text), timings);
            break;
        }
    }
}

// Reasoning and content in one chunk, then one chunk per piece of a tool call: a call's first carries
// its id, type and name, the others the next piece of its arguments. Held-back log-probabilities go
// with the first chunk.
void GenerationResponse::send_parsed_delta(size_t i, const ChatStreamParser::Delta& d, const json& timings) {
    Choice& c = choices_[i];
    const auto take_probs = [&c] {
        json p = c.pending_probs.empty() ? json() : c.pending_probs;
        c.pending_probs = json::array();
        return p;
    };
    json delta = json::object();
    if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
    if (!d.content.empty()) delta["content"] = d.content;
    bool timed = false;
    if (!delta.empty()) {
        send_chat_delta(i, delta, take_probs(), timings);
        timed = true;
    }
    for (const auto& call : d.calls) {
        json piece = {{"index", call.index}, {"function", {{"arguments", call.arguments}}}};
        if (call.first) {
            piece["id"] = call.id;
            piece["type"] = "function";
            piece["function"] = {{"name", call.name}, {"arguments", call.arguments}};
        }
        send_chat_delta(i, {{"tool_calls", json::array({piece})}}, take_probs(), timed ? json() : timings);
        timed = true;
    }
}

void GenerationResponse::send_chat_delta(size_t i, json delta, const json& probs, const json& timings) {
    json ch{{"index", i}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
    if (!probs.is_null()) ch["logprobs"] = {{"content", probs}};
    json j = chunk_base("chat.completion.chunk");
    j["choices"] = json::array({ch});
    if (!timings.is_null()) j["timings"] = timings;
    send(j);
}

json GenerationResponse::chat_message(const sched::FinalOutput& f, const char*& finish) const {
    if (!rc_.parse_chat) {
        finish = finish_name(f.finish);
        return {{"role", "assistant"}, {"content", f.content}};
    }
    const auto parsed = parse_reply(f.content, rc_.parse, rc_.tool_triggers, f.finish == sched::FinishReason::Length);
    finish = chat_finish_name(f.finish, !parsed.tool_calls.empty());
    return parsed_message_json(parsed);
}

json GenerationResponse::native_final(size_t i, const sched::FinalOutput& f) const {
    const char* stop_type = f.stopped_eos ? "eos" : f.stopped_word ? "word" : "limit";
    json j{{"index", i},
           {"content", stream_ ? "" : f.content},
           {"id_slot", f.slot_id},
           {"stop", true},
           {"model", rc_.model_name},
           {"tokens_predicted", f.timings.predicted_n},
           {"tokens_evaluated", f.n_prompt_tokens},
           {"generation_settings", rc_.generation_settings},
           {"prompt", i < rc_.prompt_pieces.size() ? rc_.prompt_pieces[i] : std::string()},
           {"has_new_line", f.content.find('\n') != std::string::npos},
           {"truncated", f.truncated},  // as llama-server: a context shift dropped tokens
           {"stop_type", stop_type},
           {"stopping_word", f.stopping_word},
           {"tokens_cached", f.n_cached_tokens},
           {"timings", timings_json(f.timings)}};
    j["tokens"] = stream_ || !rc_.options.return_tokens ? json::array() : json(f.tokens);
    if (!stream_ && rc_.options.sampling.n_probs > 0) j["completion_probabilities"] = choices_[i].logprobs;
    return rc_.options.response_fields.empty() ? j : select_fields(j, rc_.options.response_fields);
}

void GenerationResponse::on_done(size_t i, const sched::FinalOutput& f) {
    if (failed_) return;
    if (rc_.agent) return agent_done(i, f);
    Choice& c = choices_[i];
    c.done = true;
    c.final = f;
    ++n_done_;
    if (stream_) {
        switch (rc_.flavor) {
            case Flavor::Native: send(native_final(i, f)); break;
            case Flavor::Completions: {
                json j = chunk_base("text_completion");
                std::string text;
                if (!c.started) {  // nothing was generated: the echoed prompt still comes
                    c.started = true;
                    if (rc_.options.echo && i < rc_.prompt_texts.size()) text = rc_.prompt_texts[i];
                }
                j["choices"] = json::array({{{"text", text}, {"index", i}, {"logprobs", nullptr},
                                             {"finish_reason", finish_name(f.finish)}}});
                // As llama-server: the last chunk carries the usage, whether or not it was asked for.
                if (n_done_ == choices_.size()) j["usage"] = usage_json();
                j["timings"] = timings_json(f.timings);
                if (rc_.verbose) j["__verbose"] = native_final(i, f);
                send(j);
                break;
            }
            case Flavor::Chat: {
                json j = chunk_base("chat.completion.chunk");
                if (!c.started) {
                    c.started = true;
                    json r = chunk_base("chat.completion.chunk");
                    r["choices"] = json::array({{{"index", i}, {"delta", {{"role", "assistant"}, {"content", ""}}},
                                                 {"logprobs", nullptr}, {"finish_reason", nullptr}}});
                    send(r);
                }
                bool tool_calls = false;
                const auto take_probs = [&c] {
                    json p = c.pending_probs.empty() ? json() : c.pending_probs;
                    c.pending_probs = json::array();
                    return p;
                };
                if (rc_.parse_chat) {
                    if (!c.parser) c.parser = std::make_unique<ChatStreamParser>(rc_.parse, rc_.tool_triggers);
                    const auto fin = c.parser->finish(f.finish == sched::FinishReason::Length);
                    send_parsed_delta(i, fin.delta, json());
                    tool_calls = !fin.parsed.tool_calls.empty();
                }
                // Tokens whose text never showed (tool-call markup): their log-probabilities still come.
                if (!c.pending_probs.empty()) send_chat_delta(i, json::object(), take_probs());
                j["choices"] = json::array({{{"index", i}, {"delta", json::object()}, {"logprobs", nullptr},
                                             {"finish_reason", chat_finish_name(f.finish, tool_calls)}}});
                if (n_done_ == choices_.size()) j["usage"] = usage_json();
                j["timings"] = timings_json(f.timings);
                if (rc_.verbose) j["__verbose"] = native_final(i, f);
                send(j);
                break;
            }
        }
        if (n_done_ == choices_.size()) finish_stream();
    } else if (n_done_ == choices_.size()) {
        respond_collected();
    }
}

void GenerationResponse::finish_stream() {
    if (rc_.flavor != Flavor::Native) {
        if (rc_.options.include_usage) {
            json j = chunk_base(rc_.flavor == Flavor::Chat ? "chat.completion.chunk" : "text_completion");
            j["choices"] = json::array();
            j["usage"] = usage_json();
            // llama-server 2026 puts the timings on this chunk too (the last before [DONE]).
            if (!choices_.empty()) j["timings"] = timings_json(choices_.back().final.timings);
            send(j);
        }
        emit("[DONE]");
    }
    end_stream();
}

void GenerationResponse::respond_collected() {
    json body;
    switch (rc_.flavor) {
        case Flavor::Native: {
            if (choices_.size() == 1) {
                body = native_final(0, choices_[0].final);
            } else {
                body = json::array();
                for (size_t i = 0; i < choices_.size(); ++i) body.push_back(native_final(i, choices_[i].final));
            }
            break;
        }
        case Flavor::Completions: {
            body = chunk_base("text_completion");
            json arr = json::array();
            for (size_t i = 0; i < choices_.size(); ++i) {
                const auto& f = choices_[i].final;
                const std::string echo = rc_.options.echo && i < rc_.prompt_texts.size() ? rc_.prompt_texts[i] : "";
                json ch{{"text", echo + f.content}, {"index", i}, {"logprobs", nullptr}, {"finish_reason", finish_name(f.finish)}};
                if (rc_.options.logprobs) ch["logprobs"] = legacy_logprobs(choices_[i].logprobs);
                arr.push_back(ch);
            }
            body["choices"] = arr;
            body["usage"] = usage_json();
            body["timings"] = timings_json(choices_[0].final.timings);
            if (rc_.verbose) body["__verbose"] = native_final(0, choices_[0].final);
            break;
        }
        case Flavor::Chat: {
            body = chunk_base("chat.completion");
            json arr = json::array();
            for (size_t i = 0; i < choices_.size(); ++i) {
                const auto& f = choices_[i].final;
                const char* finish = nullptr;
                json ch{{"index", i}, {"message", chat_message(f, finish)}, {"logprobs", nullptr}};
                ch["finish_reason"] = finish;
                if (rc_.options.logprobs) ch["logprobs"] = {{"content", choices_[i].logprobs}};
                arr.push_back(ch);
            }
            body["choices"] = arr;
            body["usage"] = usage_json();
            body["timings"] = timings_json(choices_[0].final.timings);
            if (rc_.verbose) body["__verbose"] = native_final(0, choices_[0].final);
            break;
        }
    }
    deferred_->respond(server::http::Response::json(body));
}

void GenerationResponse::on_error(size_t, int status, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    if (on_failure_) on_failure_();
    if (stream_ && rc_.agent) {
        send_events(rc_.agent->stream_error(status, message));
        end_stream();
    } else if (stream_) {
        send(server::http::error_body(status, message));
        end_stream();
    } else if (deferred_) {
        deferred_->respond(rc_.agent ? rc_.agent->error(status, message)
                                     : server::http::error_response(status, message));
    }
}

}  // namespace api
