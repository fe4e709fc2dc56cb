// Generation endpoints: /completion (native), /v1/completions and /v1/chat/completions.
// Path of a request: parse + validate (schemas/) -> options and prompt tokens -> tasks for the
// scheduler -> the engine thread streams tokens back through GenerationResponse.
#include <spdlog/spdlog.h>

#include <chrono>
#include <limits>
#include <random>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/reasoning_budget.h"
#include "engine/grammar/regex.h"
#include "server/api/api.h"
#include "server/api/chat_request_options.h"
#include "server/api/chat_tools.h"
#include "server/api/generation_response.h"
#include "server/api/ids.h"
#include "server/api/response_format_grammar.h"
#include "server/api/restated_chat.h"
#include "server/api/tool_syntax.h"
#include "server/http/errors.h"

namespace api {

using server::http::HttpError;

namespace {

bool is_token_array(const json& a) {
    if (!a.is_array() || a.empty()) return false;
    for (const auto& e : a)
        if (!e.is_number_integer()) return false;
    return true;
}

}  // namespace

// Compiled here, on the HTTP thread, so that a bad grammar is a 400 before anything is queued. The
// scheduler samples by rejection (llama-server's default; it has no field to choose grammar-first).
std::unique_ptr<engine::Grammar> Api::compile_grammar(const GenerationOptions& opts) const {
    if (opts.grammar.empty()) return nullptr;
    std::optional<engine::GrammarTriggers> triggers;
    if (opts.grammar_lazy) triggers = opts.triggers;
    try {
        return std::make_unique<engine::Grammar>(opts.grammar, "root", grammar_vocab_, triggers);
    } catch (const engine::GrammarError& e) {
        bad_request("invalid grammar at line " + std::to_string(e.line) + ", column " +
                    std::to_string(e.column) + ": " + e.message);
    } catch (const engine::gbnf::RegexError& e) {
        bad_request(std::string("invalid grammar trigger pattern: ") + e.what());
    } catch (const std::exception& e) {
        bad_request(std::string("invalid grammar: ") + e.what());
    }
}

// One prompt: a string, an array of token ids, or a mix of strings and ids.
std::vector<engine::Token> Api::tokenize_prompt(const json& prompt) const {
    if (!prompt.is_string() && !prompt.is_array())
        bad_request("'prompt' must be a string, an array of token ids, or an array of prompts");
    std::vector<engine::Token> out = tokenize_mixed(prompt, model_->vocab(), true, true, "prompt");
    if (out.empty()) bad_request("the prompt is empty");
    return out;
}

Api::Reply Api::completion(Request& req, Flavor flavor) {
    require_ready();
    require_generation();
    const json body = parse_body(req, flavor == Flavor::Native ? "completion.json" : "completions.json");
    const json* prompt = field(body, "prompt");
    if (!prompt) bad_request("'prompt' is required");

    // Several prompts: an array whose elements are strings or token arrays (not a single mixed prompt).
    std::vector<json> prompts;
    bool multi = prompt->is_array() && !prompt->empty() && !is_token_array(*prompt);
    if (multi)
        for (const auto& e : *prompt) multi = multi && (e.is_string() || e.is_array());
    if (multi) {
        for (const auto& e : *prompt) prompts.push_back(e);
    } else {
        prompts.push_back(*prompt);
    }
    if (prompts.size() > 16) bad_request("at most 16 prompts per request");

    GenerationOptions opts;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        opts = parse_generation_options(body, config_.defaults, model_->vocab(), flavor, req.body);
    }
    std::vector<std::vector<engine::Token>> tokens;
    std::vector<std::string> texts;
    const json* suffix = flavor == Flavor::Completions ? field(body, "suffix") : nullptr;
    if (suffix && !suffix->get<std::string>().empty()) {
        if (prompts.size() != 1 || !(prompts[0].is_string() || is_token_array(prompts[0])))
            bad_request("'suffix' takes one prompt: a string or an array of token ids");
        tokens.push_back(suffix_prompt(prompts[0], suffix->get<std::string>(), opts.n_predict));
        texts.push_back(prompts[0].is_string() ? prompts[0].get<std::string>()
                                               : model_->vocab().detokenize(tokenize_prompt(prompts[0])));
        return start_generation(req, flavor, body, opts, tokens, texts);
    }
    for (const auto& p : prompts) {
        tokens.push_back(tokenize_prompt(p));
        texts.push_back(p.is_string() ? p.get<std::string>() : model_->vocab().detokenize(tokens.back()));
    }
    return start_generation(req, flavor, body, opts, tokens, texts);
}

Api::PreparedChat Api::prepare_chat_request(const Request& req, json& body) {
    require_ready();
    require_generation();
    body = parse_body(req, "chat_completions.json");
    const json* messages = field(body, "messages");
    if (!messages || !messages->is_array() || messages->empty())
        bad_request("'messages' must be a non-empty array");
    // The body again, in the client's key order: tool definitions are rendered as the client wrote them.
    nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (!obody.is_object()) bad_request("the request body must be a JSON object");
    // reasoning_effort reaches the template as the Responses API's reasoning.effort does.
    if (const auto it = obody.find("reasoning_effort"); it != obody.end() && !it->is_null())
        apply_reasoning_effort(obody, it->get<std::string>(), "reasoning_effort");
    return prepare_chat(body, obody, req.body, {}, "call_");
}

Api::Reply Api::chat_completions(Request& req) {
    json body;
    PreparedChat chat = prepare_chat_request(req, body);
    return start_generation(req, Flavor::Chat, body, chat.opts, {chat.tokens}, {chat.prompt}, &chat.parse);
}

Api::Reply Api::chat_input_tokens(Request& req) {
    // The prompt the same body would generate from: template, tools, kwargs and prefill included.
    json body;
    const PreparedChat chat = prepare_chat_request(req, body);
    return server::http::Response::json({{"object", "response.input_tokens"}, {"input_tokens", chat.tokens.size()}});
}

Api::PreparedChat Api::prepare_chat(const json& body, const nlohmann::ordered_json& obody,
                                    std::string_view raw_body, const std::string& prefill,
                                    const char* call_id_prefix) const {
    PreparedChat out;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        out.opts = parse_generation_options(body, config_.defaults, model_->vocab(), Flavor::Chat, raw_body);
    }
    const ChatTools tools = parse_chat_tools(obody);
    const bool call_tools = tools.active() && tools.choice != ToolChoice::None;
    // --skip-chat-parsing: the tools still reach the template, but nothing constrains or parses the reply.
    const bool parse_reply = !config_.skip_chat_parsing;
    const auto& vocab = model_->vocab();
    if (parse_reply) apply_tool_grammar(tools, chat_->tool_format(), vocab, out.opts);
    out.opts.reasoning_budget = parse_reply ? request_reasoning_budget(obody, config_.reasoning_budget) : -1;
    out.opts.reasoning_budget_message = request_budget_message(obody, config_.reasoning_budget_message);
    const nlohmann::ordered_json kwargs =
        chat_template_kwargs(obody, config_.chat_template_kwargs, config_.reasoning_budget);
    nlohmann::ordered_json messages = obody["messages"];
    require_text_content(messages);
    nlohmann::ordered_json turn;
    const std::string continued =
        (config_.prefill_assistant ? take_assistant_prefill(messages, &turn) : "") + prefill;
    try {
        // tool_choice "none" keeps the tools in the prompt (OpenAI's and Anthropic's meaning, llama-server's
        // prompt): they are only not called.
        const nlohmann::ordered_json& offered = tools.active() ? tools.tools : nlohmann::ordered_json();
        out.prompt = continued.empty() ? chat_->apply(messages, offered, true, kwargs)
                                       : chat_->apply_continuing(messages, offered, continued, kwargs, turn);
    } catch (const HttpError&) {
        throw;
    } catch (const std::exception& e) {
        bad_request(std::string("cannot apply the chat template: ") + e.what());
    }
    ChatParse& parse = out.parse;
    parse.options.extract_reasoning = parse_reply && extract_reasoning(obody, config_.reasoning_format);
    parse.options.reasoning_tags = chat_->reasoning_tags();
    // gpt-oss: its reply is read from Harmony's channels (reasoning, content and calls alike).
    parse.options.harmony = parse_reply && chat_->harmony();
    const bool opened = !parse.options.harmony &&
                        engine::chat::prompt_opens_reasoning(out.prompt, parse.options.reasoning_tags);
    parse.options.reasoning_opened_in_prompt = parse.options.extract_reasoning && opened;
    if (parse_reply && call_tools && opened)
        close_reasoning_first(parse.options.reasoning_tags.close, vocab, out.opts);
    // A response format: the reasoning block first, then the value, bare or fenced, as llama-server's chat
    // grammar has it; the reply's content is the value.
    if (parse_reply && !call_tools && out.opts.grammar_from_schema && !out.opts.grammar.empty()) {
        const auto& tags = parse.options.reasoning_tags;
        const ReasoningLead lead = parse.options.harmony
                                       ? ReasoningLead::Harmony
                                       : reasoning_lead(out.prompt, parse.options.extract_reasoning, opened, tags);
        std::vector<std::string> markers = {tags.open, tags.close};
        if (parse.options.harmony)
            for (const auto& m : tool_syntax(engine::chat::ToolCallFormat::Harmony).markers) markers.push_back(m);
        out.opts.grammar = response_format_grammar(out.opts.grammar, lead, tags,
                                                   GbnfLiterals(control_markers(markers, vocab)));
        parse.options.json_reply = true;
    }
    // The reply must show the markers the parser looks for, also where the model writes them as
    // control tokens (which otherwise have no text).
    std::vector<std::string> shown = {parse.options.reasoning_tags.open, parse.options.reasoning_tags.close};
    const engine::chat::ToolCallFormat format = chat_->tool_format();
    if (parse_reply && call_tools) {
        const ToolSyntax& syntax = tool_syntax(format);
        parse.options.tool_format = format;
        parse.options.string_parameters = string_parameters(tools);
        parse.tool_triggers = reply_triggers(syntax);
        shown.insert(shown.end(), syntax.markers.begin(), syntax.markers.end());
    }
    if (parse.options.harmony) {
        const auto& markers = tool_syntax(engine::chat::ToolCallFormat::Harmony).markers;
        shown.insert(shown.end(), markers.begin(), markers.end());
    }
    for (const auto& m : control_markers(shown, vocab)) parse.shown_tokens.push_back(m.token);
    if (format == engine::chat::ToolCallFormat::Mistral || format == engine::chat::ToolCallFormat::MistralArgs) {
        // Mistral's templates refuse call ids other than nine letters and digits.
        parse.options.id_prefix = random_id("", 7);
        parse.options.id_digits = 2;
    } else {
        parse.options.id_prefix = random_id(call_id_prefix) + "_";
    }
    out.tokens = vocab.tokenize(out.prompt, true, true);
    // A template that writes the BOS text itself must not get a second BOS.
    if (out.tokens.size() >= 2 && vocab.bos() >= 0 && out.tokens[0] == vocab.bos() &&
        out.tokens[1] == vocab.bos())
        out.tokens.erase(out.tokens.begin());
    if (out.tokens.empty()) bad_request("the formatted prompt is empty");
    return out;
}

Api::Reply Api::start_generation(Request& req, Flavor flavor, const json& body, const GenerationOptions& opts,
                                 const std::vector<std::vector<engine::Token>>& prompts,
                                 const std::vector<std::string>& prompt_texts, const ChatParse* chat_parse,
                                 std::shared_ptr<AgentReply> agent) {
    // Checked here as well as in the scheduler, so that a stream that cannot start gets its 400 as a status.
    // llama-server's error type and numbers: clients trim the conversation by them and retry.
    for (const auto& p : prompts)
        if ((int32_t)p.size() >= scheduler_->n_ctx_slot())
            throw HttpError(400,
                            "the request exceeds the available context size (prompt of " + std::to_string(p.size()) +
                                " tokens, context of " + std::to_string(scheduler_->n_ctx_slot()) +
                                " tokens per slot); try increasing it",
                            "exceed_context_size_error",
                            {{"n_prompt_tokens", int64_t(p.size())}, {"n_ctx", scheduler_->n_ctx_slot()}});
    std::unique_ptr<engine::Grammar> grammar = compile_grammar(opts);

    ResponseContext rc;
    rc.flavor = flavor;
    // OpenAI endpoints answer with the model the client named (llama-server does); native, the server's.
    rc.model_name = flavor != Flavor::Native && !opts.model.empty() ? opts.model : model_name();
    rc.verbose = config_.verbose;
    rc.id = random_id(flavor == Flavor::Chat ? "chatcmpl-" : "cmpl-");
    rc.created = unix_now();
    rc.options = opts;
    const std::vector<float> lora = request_lora(body);
    rc.generation_settings = generation_settings(opts);
    rc.generation_settings["lora"] = lora_json(lora);
    rc.choices_per_prompt = (size_t)opts.n_choices;
    if (chat_parse) {
        rc.parse_chat = chat_parse->options.extract_reasoning || chat_parse->options.json_reply ||
                        chat_parse->options.harmony ||
                        chat_parse->options.tool_format != engine::chat::ToolCallFormat::None;
        rc.parse = chat_parse->options;
        rc.tool_triggers = chat_parse->tool_triggers;
    }
    rc.agent = std::move(agent);
    for (const auto& t : prompt_texts)
        for (int c = 0; c < opts.n_choices; ++c) rc.prompt_texts.push_back(t);
    if (flavor == Flavor::Native)
        for (const auto& p : prompts) {
            std::string pieces;
            for (const engine::Token t : p) pieces += model_->vocab().token_to_piece(t, true);
            for (int c = 0; c < opts.n_choices; ++c) rc.prompt_pieces.push_back(pieces);
        }
    const size_t n_tasks = prompts.size() * (size_t)opts.n_choices;
    const std::string response_id = rc.id;
    auto response = std::make_shared<GenerationResponse>(std::move(rc), model_->vocab(), n_tasks, format_pool_->serial());

    // What each task's sampler obeys: the grammar, within the reasoning budget when there is one.
    std::shared_ptr<const engine::TokenConstraint> constraint(std::move(grammar));
    engine::ReasoningBudget::EndSignal end_signal;
    if (opts.reasoning_control) end_signal = reasoning_controls_.arm(response_id);
    if (opts.reasoning_budget >= 0 || end_signal) {
        // The template's tags; once the budget is spent the reply gets the message, then the closing tag.
        const engine::chat::ReasoningTags tags = chat_parse ? chat_parse->options.reasoning_tags
                                                            : engine::chat::ReasoningTags{};
        const bool opened =
            !prompt_texts.empty() && engine::chat::prompt_opens_reasoning(prompt_texts[0], tags);
        const std::string forced = opts.reasoning_budget_message + "\n" + tags.close + "\n\n";
        constraint = std::make_shared<engine::ReasoningBudget>(
            opts.reasoning_budget >= 0 ? opts.reasoning_budget : engine::ReasoningBudget::kUnlimited, opened,
            grammar_vocab_, model_->vocab().tokenize(forced, false, true),
            constraint ? constraint->clone() : nullptr, engine::ReasoningBudget::Tags{tags.open, tags.close},
            end_signal);
    }
    if (prompt_log_)
        for (size_t p = 0; p < prompts.size(); ++p)
            prompt_log_->write(p < prompt_texts.size() ? prompt_texts[p] : model_->vocab().detokenize(prompts[p]));
    std::vector<std::shared_ptr<sched::Task>> tasks;
    for (size_t p = 0; p < prompts.size(); ++p)
        for (int c = 0; c < opts.n_choices; ++c) {
            auto t = std::make_shared<sched::Task>();
            t->lora = lora;
            t->id = next_task_id_.fetch_add(1);
            t->prompt = prompts[p];
            t->n_predict = opts.n_predict;
            t->spec.disabled = opts.spec_disabled;
            t->spec.n_max = opts.spec_n_max;
            t->spec.n_min = opts.spec_n_min;
            t->spec.p_min = opts.spec_p_min;
            t->spec.la_w = opts.la_w;
            t->spec.la_n = opts.la_n;
            t->spec.la_g = opts.la_g;
            t->spec.la_fixed = opts.la_fixed;
            t->sampling = opts.sampling;
            if (c > 0 && t->sampling.seed != engine::kRandomSeed) t->sampling.seed += (uint32_t)c;
            t->post_sampling_probs = opts.post_sampling_probs;
            t->stop = opts.stop;
            if (chat_parse) t->shown_tokens = chat_parse->shown_tokens;
            t->ignore_eos = opts.ignore_eos;
            // As llama-server: ignoring EOS bans the end-of-generation tokens, so they are never sampled.
            if (opts.ignore_eos)
                for (engine::Token eog : model_->vocab().eog_tokens())
                    t->sampling.logit_bias.push_back({eog, -std::numeric_limits<float>::infinity()});
            t->n_discard = opts.n_discard;
            t->n_cache_reuse = opts.n_cache_reuse;
            t->n_indent = opts.n_indent;
            t->t_max_predict_ms = opts.t_max_predict_ms;
            t->timings_per_token = opts.timings_per_token;
            t->return_progress = opts.return_progress && opts.stream;
            t->stream = opts.stream;
            t->grammar_text = opts.grammar;
            t->cache_prompt = opts.cache_prompt;
            t->n_keep = opts.n_keep;
            t->id_slot = opts.id_slot;
            if (constraint) t->make_grammar = [constraint]() { return constraint->clone(); };
            t->sink = response->sink(tasks.size());
            tasks.push_back(std::move(t));
        }
    if (opts.id_slot >= scheduler_->n_parallel())
        bad_request("'id_slot' " + std::to_string(opts.id_slot) + " does not exist (" +
                    std::to_string(scheduler_->n_parallel()) + " slots)");

    // Weak references: the tasks own the response through their sinks, so a strong capture here would
    // make a cycle (response -> callback -> tasks -> response) and leak every request.
    sched::Scheduler* scheduler = scheduler_;
    std::vector<std::weak_ptr<sched::Task>> weak(tasks.begin(), tasks.end());
    auto cancel_all = [scheduler, weak]() {
        for (const auto& w : weak)
            if (auto t = w.lock()) scheduler->cancel(t);
    };
    response->set_on_failure(cancel_all);
    Reply reply = server::http::Response{};
    // A resumable stream goes on without its client (DELETE /v1/stream stops it); others end with it.
    const auto conv = opts.stream ? req.headers.get("x-conversation-id") : std::nullopt;
    const std::string conv_id = conv ? StreamSessions::valid_id(*conv) : "";
    if (conv && conv_id.empty()) bad_request("'X-Conversation-Id' must be 1 to 256 printable ASCII characters");
    if (opts.stream) {
        auto writer = req.stream();
        response->set_stream(writer);
        if (!conv_id.empty()) {
            auto session = stream_sessions_.start(conv_id);
            std::weak_ptr<GenerationResponse> weak_response = response;
            session->set_cancel([cancel_all, weak_response] {
                cancel_all();
                if (auto r = weak_response.lock()) r->stop();
            });
            response->set_session(std::move(session));
        } else {
            writer->on_cancel(cancel_all);
        }
        response->begin();
        reply = Reply(writer);
    } else {
        auto deferred = req.defer();
        deferred->on_cancel(cancel_all);
        response->set_deferred(deferred);
        reply = Reply(deferred);
    }
    for (auto& t : tasks) scheduler_->submit(t);
    return reply;
}

}  // namespace api
