#include "server/api/request_params.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "engine/grammar/json_schema.h"
#include "engine/speculative/lookahead.h"

namespace api {

namespace {

void parse_logit_bias(const json& lb, const engine::Vocab& vocab, std::vector<engine::LogitBias>& out) {
    const int32_t n_vocab = vocab.n_tokens();
    auto add_token = [&](int64_t id, double bias) {
        if (id < 0 || id >= n_vocab)
            bad_request("logit_bias: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                        std::to_string(n_vocab - 1) + ")");
        out.push_back({(engine::Token)id, (float)bias});
    };
    auto bias_value = [](const json& v) -> double {
        if (v.is_boolean()) {
            if (v.get<bool>())
                bad_request("logit_bias: a bias of true is not meaningful (use false to ban a token)");
            return -std::numeric_limits<double>::infinity();
        }
        if (!v.is_number()) bad_request("logit_bias: biases must be numbers (or false to ban)");
        return v.get<double>();
    };
    if (lb.is_object()) {  // OpenAI form {"123": -100}; like llama-server, a key that is not an id is text
        for (const auto& [k, v] : lb.items()) {
            if (k.empty()) bad_request("logit_bias: a key must be a token id or text, not empty");
            const double bias = bias_value(v);
            char* end = nullptr;
            const long long id = std::strtoll(k.c_str(), &end, 10);
            if (!*end) {
                add_token(id, bias);
            } else {
                for (engine::Token t : vocab.tokenize(k, false)) add_token(t, bias);
            }
        }
    } else if (lb.is_array()) {  // llama.cpp form [[id or text, bias], ...]
        for (const auto& e : lb) {
            if (!e.is_array() || e.size() != 2)
                bad_request("logit_bias: entries must be [token, bias] pairs");
            const double bias = bias_value(e[1]);
            if (e[0].is_number_integer()) {
                add_token(e[0].get<int64_t>(), bias);
            } else if (e[0].is_string()) {
                for (engine::Token t : vocab.tokenize(e[0].get<std::string>(), false)) add_token(t, bias);
            } else {
                bad_request("logit_bias: a token must be an id or a string");
            }
        }
    } else {
        bad_request("'logit_bias' must be an object or an array");
    }
}

std::vector<std::string> parse_stop(const json& body) {
    const json* f = field(body, "stop");
    if (!f) return {};
    if (f->is_string()) return {f->get<std::string>()};
    if (!f->is_array()) bad_request("'stop' must be a string or an array of strings");
    // Every stop string is checked after every token of the request, on the engine thread.
    if (f->size() > kMaxStopStrings)
        bad_request("'stop' may hold at most " + std::to_string(kMaxStopStrings) + " strings, got " +
                    std::to_string(f->size()));
    std::vector<std::string> out;
    for (const auto& s : *f) {
        if (!s.is_string()) bad_request("'stop' must be a string or an array of strings");
        if (!s.get<std::string>().empty()) out.push_back(s.get<std::string>());
    }
    return out;
}

// nlohmann::json sorts object keys, but a schema's property order is the order the generated object
// lists its keys in, so a schema is read again, in order, from the raw request body at `path`.
nlohmann::ordered_json ordered_schema(const json& schema, std::string_view raw_body,
                                      std::initializer_list<const char*> path) {
    if (!raw_body.empty()) {
        try {
            const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(raw_body);
            const nlohmann::ordered_json* at = &doc;
            for (const char* key : path) {
                if (!at->is_object() || !at->contains(key)) {
                    at = nullptr;
                    break;
                }
                at = &(*at)[key];
            }
            if (at) return *at;
        } catch (const nlohmann::json::exception&) {
            // The body was parsed already; fall back to the sorted copy below.
        }
    }
    return nlohmann::ordered_json::parse(schema.dump());
}

std::string schema_grammar(const nlohmann::ordered_json& schema, std::string_view where) {
    // An empty schema asks for a JSON object here, as in llama-server (JSON Schema itself allows any
    // value: clients sending {} with a JSON response format expect an object).
    if (schema.is_object() && schema.empty()) return engine::json_object_gbnf();
    try {
        return engine::json_schema_to_gbnf(schema);
    } catch (const engine::SchemaError& e) {
        bad_request("invalid JSON schema in '" + std::string(where) + "' at '#" + e.pointer +
                    "': " + e.reason);
    } catch (const std::exception& e) {
        bad_request("invalid JSON schema in '" + std::string(where) + "': " + e.what());
    }
}

// llama-server's trigger types, by number (common_grammar_trigger_type) or by name.
enum class TriggerType { Token = 0, Word = 1, Pattern = 2, PatternFull = 3 };

TriggerType trigger_type(const json& t) {
    const json* type = field(t, "type");
    if (!type) return TriggerType::Word;
    if (type->is_number_integer()) {
        const int64_t v = type->get<int64_t>();
        if (v < 0 || v > 3) bad_request("grammar trigger type " + std::to_string(v) + " is not 0..3");
        return TriggerType(v);
    }
    if (!type->is_string()) bad_request("a grammar trigger's 'type' must be a name or a number");
    const std::string name = type->get<std::string>();
    if (name == "token") return TriggerType::Token;
    if (name == "word") return TriggerType::Word;
    if (name == "pattern") return TriggerType::Pattern;
    if (name == "pattern_full") return TriggerType::PatternFull;
    bad_request("unknown grammar trigger type '" + name + "' (token, word, pattern or pattern_full)");
}

void add_trigger_token(int64_t id, const engine::Vocab& vocab, engine::GrammarTriggers& out) {
    if (id < 0 || id >= vocab.n_tokens())
        bad_request("grammar trigger token " + std::to_string(id) + " is outside the vocabulary");
    out.tokens.push_back((engine::Token)id);
}

// A trigger word that is one control token (e.g. "<tool_call>") never shows up as text, since control
// tokens have no text for the grammar; like llama-server, it then also triggers as that token.
void add_trigger_word(const std::string& word, const engine::Vocab& vocab, engine::GrammarTriggers& out) {
    if (word.empty()) bad_request("a grammar trigger word must not be empty");
    const auto ids = vocab.tokenize(word, false, true);
    if (ids.size() == 1 && vocab.token_to_piece(ids[0], false).empty()) out.tokens.push_back(ids[0]);
    out.words.push_back(word);
}

// `shown`: the triggers as llama-server lists them in generation_settings ({type: 0 token, 1 word, 2 pattern,
// 3 pattern_full; value; token}).
void parse_triggers(const json& list, const engine::Vocab& vocab, engine::GrammarTriggers& out, json& shown) {
    if (!list.is_array()) bad_request("'grammar_triggers' must be an array");
    // Each pattern is matched against the reply after every token until one fires.
    if (list.size() > kMaxGrammarTriggers)
        bad_request("'grammar_triggers' may hold at most " + std::to_string(kMaxGrammarTriggers) + " entries, got " +
                    std::to_string(list.size()));
    for (const auto& t : list) {
        if (t.is_string()) {
            add_trigger_word(t.get<std::string>(), vocab, out);
            shown.push_back({{"type", 1}, {"value", t}});
            continue;
        }
        if (!t.is_object()) bad_request("grammar_triggers entries must be objects or strings");
        const TriggerType type = trigger_type(t);
        const json* value = field(t, "value");
        if (!value) value = field(t, "word");  // the older llama-server spelling
        if (type == TriggerType::Token) {
            // llama-server sends the id in "token" and its text in "value".
            if (const json* tok = field(t, "token"); tok && tok->is_number_integer())
                add_trigger_token(tok->get<int64_t>(), vocab, out);
            else if (value && value->is_number_integer())
                add_trigger_token(value->get<int64_t>(), vocab, out);
            else
                bad_request("a token trigger needs an integer 'token'");
            const engine::Token id = out.tokens.back();
            shown.push_back({{"type", 0}, {"value", vocab.token_to_piece(id, true)}, {"token", id}});
            continue;
        }
        if (!value || !value->is_string()) bad_request("a grammar trigger needs a string 'value'");
        const std::string v = value->get<std::string>();
        shown.push_back({{"type", type == TriggerType::Word      ? 1
                                  : type == TriggerType::Pattern ? 2
                                                                 : 3},
                         {"value", v}});
        if (type == TriggerType::Word) {
            add_trigger_word(v, vocab, out);
        } else if (type == TriggerType::Pattern) {
            out.patterns.push_back(v);
        } else {  // pattern_full: the whole generated text must match
            out.patterns.push_back((v.empty() || v.front() != '^' ? "^" : "") + v +
                                   (v.empty() || v.back() != '$' ? "$" : ""));
        }
    }
}

void parse_grammar(const json& body, std::string_view raw_body, const engine::Vocab& vocab,
                   GenerationOptions& o) {
    const auto grammar = get_opt<std::string>(body, "grammar");
    const json* schema = field(body, "json_schema");
    const json* rf = field(body, "response_format");
    int sources = (grammar ? 1 : 0) + (schema ? 1 : 0);
    if (rf) {
        if (!rf->is_object()) bad_request("'response_format' must be an object");
        const std::string type = get_opt<std::string>(*rf, "type").value_or("text");
        if (type == "json_object") {
            ++sources;
            o.grammar =
                rf->contains("schema")
                    ? schema_grammar(ordered_schema((*rf)["schema"], raw_body, {"response_format", "schema"}),
                                     "response_format.schema")
                    : engine::json_object_gbnf();
        } else if (type == "json_schema") {
            ++sources;
            const json* js = field(*rf, "json_schema");
            if (js && !js->is_object()) bad_request("'response_format.json_schema' must be an object");
            if (js && js->contains("schema")) {
                o.grammar = schema_grammar(
                    ordered_schema((*js)["schema"], raw_body, {"response_format", "json_schema", "schema"}),
                    "response_format.json_schema.schema");
            } else if (rf->contains("schema")) {  // llama-server's short form
                o.grammar =
                    schema_grammar(ordered_schema((*rf)["schema"], raw_body, {"response_format", "schema"}),
                                   "response_format.schema");
            } else {  // no schema: any JSON object, as llama-server
                o.grammar = engine::json_object_gbnf();
            }
        } else if (type != "text") {
            bad_request("response_format.type must be 'text', 'json_object' or 'json_schema', not '" + type +
                        "'");
        }
    }
    if (sources > 1) bad_request("use only one of 'grammar', 'json_schema' and 'response_format'");
    if (sources == 0 && !o.grammar.empty()) o.grammar_from_defaults = true;  // the server's --grammar
    if (sources > 0 && !grammar) o.grammar_from_schema = true;
    if (grammar) o.grammar = *grammar;
    if (schema) o.grammar = schema_grammar(ordered_schema(*schema, raw_body, {"json_schema"}), "json_schema");

    read_into(body, "grammar_lazy", o.grammar_lazy);
    if (const json* tr = field(body, "grammar_triggers")) parse_triggers(*tr, vocab, o.triggers, o.trigger_list);
    if (o.grammar_lazy && o.grammar.empty()) bad_request("'grammar_lazy' needs a grammar");
    if (o.grammar_lazy && o.triggers.words.empty() && o.triggers.patterns.empty() &&
        o.triggers.tokens.empty())
        bad_request("'grammar_lazy' needs at least one entry in 'grammar_triggers'");
}

void parse_sampling(const json& body, engine::SamplingParams& s, const engine::Vocab& vocab) {
    read_into(body, "temperature", s.temperature);
    read_into(body, "dynatemp_range", s.dynatemp_range);
    read_into(body, "dynatemp_exponent", s.dynatemp_exponent);
    read_into(body, "top_k", s.top_k);
    read_into(body, "top_p", s.top_p);
    read_into(body, "min_p", s.min_p);
    read_into(body, "typical_p", s.typical_p);
    read_into(body, "top_n_sigma", s.top_n_sigma);
    read_into(body, "xtc_probability", s.xtc_probability);
    read_into(body, "xtc_threshold", s.xtc_threshold);
    read_into(body, "min_keep", s.min_keep);
    read_into(body, "repeat_penalty", s.repeat_penalty);
    read_into(body, "repeat_last_n", s.repeat_last_n);
    read_into(body, "presence_penalty", s.presence_penalty);
    read_into(body, "frequency_penalty", s.frequency_penalty);
    read_into(body, "dry_multiplier", s.dry_multiplier);
    read_into(body, "dry_base", s.dry_base);
    read_into(body, "dry_allowed_length", s.dry_allowed_length);
    read_into(body, "dry_penalty_last_n", s.dry_penalty_last_n);
    if (const json* b = field(body, "dry_sequence_breakers")) {
        if (!b->is_array()) bad_request("'dry_sequence_breakers' must be an array of strings");
        s.dry_sequence_breakers.clear();
        for (const auto& e : *b) {
            if (!e.is_string()) bad_request("'dry_sequence_breakers' must be an array of strings");
            s.dry_sequence_breakers.push_back(e.get<std::string>());
        }
    }
    read_into(body, "mirostat", s.mirostat);
    read_into(body, "mirostat_tau", s.mirostat_tau);
    read_into(body, "mirostat_eta", s.mirostat_eta);
    read_into(body, "adaptive_target", s.adaptive_target);
    read_into(body, "adaptive_decay", s.adaptive_decay);
    if (const json* sd = field(body, "seed")) {
        if (!sd->is_number_integer()) bad_request("'seed' must be an integer");
        const int64_t v = sd->get<int64_t>();
        if (v < -1 || v > 0xFFFFFFFFll) bad_request("'seed' must be -1 or in [0, 4294967295]");
        s.seed = v == -1 ? engine::kRandomSeed : (uint32_t)v;
    }
    if (const json* lb = field(body, "logit_bias")) parse_logit_bias(*lb, vocab, s.logit_bias);
    if (const json* smp = field(body, "samplers")) {
        std::string err;
        if (smp->is_string()) {
            err = engine::parse_sampler_chars(smp->get<std::string>(), s.samplers);
        } else if (smp->is_array()) {
            std::vector<std::string> names;
            for (const auto& n : *smp) {
                if (!n.is_string()) bad_request("'samplers' must be an array of names or a string");
                names.push_back(n.get<std::string>());
            }
            err = engine::parse_sampler_names(names, s.samplers);
        } else {
            bad_request("'samplers' must be an array of names or a string");
        }
        if (!err.empty()) bad_request(err);
    }
}

void parse_speculative(const json& body, GenerationOptions& o) {
    const json* obj = nullptr;
    if (auto it = body.find("speculative"); it != body.end()) {
        if (it->is_boolean()) {
            o.spec_disabled = !it->get<bool>();
        } else if (it->is_object()) {
            obj = &*it;
        } else if (!it->is_null()) {
            bad_request("'speculative' must be a boolean or an object");
        }
    }
    const auto field = [&](const char* name, const std::string& flat) -> const json* {
        if (obj)
            if (auto it = obj->find(name); it != obj->end()) return &*it;
        if (auto it = body.find(flat); it != body.end()) return &*it;
        return nullptr;
    };
    const auto int_field = [&](const char* name, int32_t& out) {
        const json* v = field(name, std::string("speculative.") + name);
        if (!v || v->is_null()) return;
        if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1024)
            bad_request(std::string("'speculative.") + name + "' must be an integer in [0, 1024]");
        out = v->get<int32_t>();
    };
    int_field("n_max", o.spec_n_max);
    int_field("n_min", o.spec_n_min);
    if (const json* v = field("p_min", "speculative.p_min"); v && !v->is_null()) {
        if (!v->is_number() || v->get<double>() < 0.0 || v->get<double>() > 1.0)
            bad_request("'speculative.p_min' must be a number in [0, 1]");
        o.spec_p_min = v->get<float>();
    }
    if (o.spec_n_max == 0) o.spec_disabled = true;
    if (o.spec_n_max > 0 && o.spec_n_min > o.spec_n_max)
        bad_request("'speculative.n_min' must not exceed 'speculative.n_max'");
}

// `lookahead: {w, n, g, fixed}`: the request's window, n-gram size and branches. Ranges are checked here;
// whether the window fits the server's batch and context is checked when the request is seated.
void parse_lookahead(const json& body, GenerationOptions& o) {
    const auto it = body.find("lookahead");
    if (it == body.end() || it->is_null()) return;
    if (!it->is_object()) bad_request("'lookahead' must be an object {w, n, g, fixed}");
    for (const auto& [key, _] : it->items())
        if (key != "w" && key != "n" && key != "g" && key != "fixed")
            bad_request("'lookahead." + key + "' is not a lookahead setting (w, n, g, fixed)");
    engine::spec::LookaheadParams p{1, 2, 1};  // stand-ins for the fields not given, for the range check
    const auto int_field = [&](const char* name, int32_t& out, int32_t& check) {
        const auto f = it->find(name);
        if (f == it->end() || f->is_null()) return;
        if (!f->is_number_integer() || f->get<int64_t>() < INT32_MIN || f->get<int64_t>() > INT32_MAX)
            bad_request(std::string("'lookahead.") + name + "' must be an integer");
        out = check = f->get<int32_t>();
    };
    int_field("w", o.la_w, p.w);
    int_field("n", o.la_n, p.n);
    int_field("g", o.la_g, p.g);
    if (const std::string err = engine::spec::lookahead_param_error(p); !err.empty()) bad_request(err);
    // A request's window rides in every step beside the other streams: bounded, adaptive or fixed.
    if (const int64_t step = engine::spec::lookahead_step_tokens(p); step > kMaxRequestLookaheadTokens)
        bad_request("'lookahead': a step of (w + g) * (n - 1) = " + std::to_string(step) +
                    " tokens is more than a request may ask for (" + std::to_string(kMaxRequestLookaheadTokens) +
                    ")");
    if (const auto f = it->find("fixed"); f != it->end() && !f->is_null()) {
        if (!f->is_boolean()) bad_request("'lookahead.fixed' must be a boolean");
        o.la_fixed = f->get<bool>() ? 1 : 0;
    }
}

}  // namespace

GenerationOptions parse_generation_options(const json& body, const ApiDefaults& defaults,
                                           const engine::Vocab& vocab, Flavor flavor,
                                           std::string_view raw_body) {
    if (!body.is_object()) bad_request("the request body must be a JSON object");
    GenerationOptions o;
    o.n_predict = defaults.n_predict;
    o.n_keep = defaults.n_keep;
    o.sampling = defaults.sampling;
    o.grammar = defaults.grammar;
    o.ignore_eos = defaults.ignore_eos;
    o.cache_prompt = defaults.cache_prompt;
    parse_sampling(body, o.sampling, vocab);

    parse_speculative(body, o);
    parse_lookahead(body, o);

    // Length limit: n_predict (native), max_tokens, max_completion_tokens (newer OpenAI name).
    for (const char* name : {"n_predict", "max_tokens", "max_completion_tokens"})
        if (auto v = get_opt<int32_t>(body, name)) {
            if (*v < -1 || (*v == 0 && flavor != Flavor::Native))
                bad_request(std::string("'") + name + "' must be " +
                            (flavor == Flavor::Native ? ">= -1" : "positive"));
            o.n_predict = *v;
        }
    // The server's -n caps every request (a request without a limit gets the server's).
    if (defaults.n_predict > 0 && (o.n_predict < 0 || o.n_predict > defaults.n_predict)) o.n_predict = defaults.n_predict;

    o.stop = parse_stop(body);
    if (o.stop.empty()) o.stop = defaults.stop;  // -r/--reverse-prompt
    read_into(body, "ignore_eos", o.ignore_eos);
    if (auto v = get_opt<int32_t>(body, "n_indent")) {
        if (*v < 0) bad_request("'n_indent' must not be negative");
        o.n_indent = *v;
    }
    if (const json* t = field(body, "t_max_predict_ms")) {
        if (!t->is_number() || t->get<double>() < 0) bad_request("'t_max_predict_ms' must be a non-negative number");
        o.t_max_predict_ms = t->get<double>();
    }
    read_into(body, "timings_per_token", o.timings_per_token);
    read_into(body, "reasoning_control", o.reasoning_control);
    read_into(body, "return_progress", o.return_progress);
    if (auto v = get_opt<int32_t>(body, "n_cache_reuse")) {
        if (*v < 0) bad_request("'n_cache_reuse' must not be negative");
        o.n_cache_reuse = *v;
    }
    if (auto v = get_opt<int32_t>(body, "n_discard")) {
        if (*v < 0) bad_request("'n_discard' must not be negative");
        o.n_discard = *v;
    }
    if (const json* rf = field(body, "response_fields")) {
        if (!rf->is_array()) bad_request("'response_fields' must be an array of strings");
        for (const auto& e : *rf) {
            if (!e.is_string()) bad_request("'response_fields' must be an array of strings");
            o.response_fields.push_back(e.get<std::string>());
        }
    }
    if (auto m = get_opt<std::string>(body, "model")) o.model = *m;
    if (flavor == Flavor::Completions) {
        read_into(body, "echo", o.echo);
        // `suffix` is read by the handler (fill-in-the-middle). best_of, which llama-server b4748 refused too
        // (2026 ignores it), is a 400 naming it, not a silent no; best_of 1 (OpenAI's default, sent by some
        // clients) is one completion: what we do anyway.
        if (const json* f = field(body, "best_of"); f && !f->is_null() && !(f->is_number_integer() && *f == 1))
            bad_request("'best_of' is not supported (ask for several completions with 'n' and pick one yourself)");
    }
    read_into(body, "cache_prompt", o.cache_prompt);
    read_into(body, "n_keep", o.n_keep);
    read_into(body, "id_slot", o.id_slot);
    read_into(body, "stream", o.stream);
    read_into(body, "return_tokens", o.return_tokens);
    read_into(body, "post_sampling_probs", o.post_sampling_probs);
    if (const json* so = field(body, "stream_options")) {
        if (!so->is_object()) bad_request("'stream_options' must be an object");
        read_into(*so, "include_usage", o.include_usage);
    }
    for (const char* name : {"n", "n_cmpl"})  // n_cmpl: llama-server's native name
        if (auto n = get_opt<int32_t>(body, name)) {
            if (*n < 1 || *n > 16) bad_request(std::string("'") + name + "' must be between 1 and 16");
            o.n_choices = *n;
        }

    // Probabilities: n_probs (native), logprobs (completions: an integer; chat: a boolean + top_logprobs).
    int32_t n_probs = 0;
    read_into(body, "n_probs", n_probs);
    if (flavor == Flavor::Chat) {
        read_into(body, "logprobs", o.logprobs);
        if (auto t = get_opt<int32_t>(body, "top_logprobs")) {
            if (*t < 0 || *t > 20) bad_request("'top_logprobs' must be between 0 and 20");
            if (!o.logprobs) bad_request("'top_logprobs' needs 'logprobs': true");
            o.top_logprobs = *t;
        }
        if (o.logprobs) n_probs = std::max(n_probs, std::max(1, o.top_logprobs));
    } else if (flavor == Flavor::Completions) {
        if (const json* lp = field(body, "logprobs")) {
            if (!lp->is_number_integer() || lp->get<int64_t>() < 0 || lp->get<int64_t>() > 20)
                bad_request("'logprobs' must be an integer between 0 and 20");
            o.logprobs = true;
            o.top_logprobs = lp->get<int32_t>();
            n_probs = std::max(n_probs, std::max(1, o.top_logprobs));
        }
    }
    if (n_probs < 0) bad_request("'n_probs' must not be negative");
    // Every generated token carries this many alternatives in the reply (tens of bytes each).
    if (n_probs > kMaxNProbs)
        bad_request("'n_probs' may be at most " + std::to_string(kMaxNProbs) + ", got " + std::to_string(n_probs));
    if (o.echo && o.logprobs)
        bad_request("'echo' with 'logprobs' is not supported: the prompt's log-probabilities are not computed");
    o.sampling.n_probs = n_probs;

    parse_grammar(body, raw_body, vocab, o);
    if (const std::string err = engine::validate(o.sampling, vocab.n_tokens()); !err.empty())
        bad_request(err);
    if (o.id_slot < -1) bad_request("'id_slot' must be -1 or a slot id");
    return o;
}

std::vector<engine::Token> tokenize_mixed(const json& content, const engine::Vocab& vocab, bool add_special,
                                          bool parse_special, const std::string& what) {
    if (content.is_string()) return vocab.tokenize(content.get_ref<const std::string&>(), add_special, parse_special);
    std::vector<engine::Token> out;
    bool first = true;
    for (const auto& e : content) {
        if (e.is_number_integer()) {
            const int64_t id = e.get<int64_t>();
            if (id < 0 || id >= vocab.n_tokens())
                bad_request(what + " token id " + std::to_string(id) + " is outside the vocabulary");
            out.push_back((engine::Token)id);
        } else if (e.is_string()) {
            const auto t = vocab.tokenize(e.get_ref<const std::string&>(), add_special && first, parse_special);
            out.insert(out.end(), t.begin(), t.end());
        } else {
            bad_request("a " + what + " array may hold only strings and token ids");
        }
        first = false;
    }
    return out;
}

std::vector<std::vector<engine::Token>> parse_embedding_inputs(const json& input, const engine::Vocab& vocab,
                                                               size_t limit,
                                                               const std::function<std::string(size_t)>& too_long) {
    // As llama-server reads prompts: a string, a list of token ids, or a list mixing strings and ids is
    // one input; any other list holds one input per element, each of those forms. "" is its special
    // tokens alone ([CLS] [SEP], or [BOS]).
    const auto all_ids = [](const json& a) {
        return a.is_array() && std::all_of(a.begin(), a.end(), [](const json& e) { return e.is_number_integer(); });
    };
    const auto mixed = [](const json& a) {
        if (!a.is_array()) return false;
        bool ids = false, strings = false;
        for (const auto& e : a) {
            if (e.is_number_integer())
                ids = true;
            else if (e.is_string())
                strings = true;
            else
                return false;
        }
        return ids && strings;
    };
    const auto one = [&](const json& p) {
        if (p.is_string()) return vocab.tokenize(p.get_ref<const std::string&>(), true, true);
        if (all_ids(p) || mixed(p)) return tokenize_mixed(p, vocab, true, true, "'input'");
        if (p.is_object()) bad_request("multimodal inputs are not supported: give text or token ids");
        bad_request("an 'input' element must be a string, a list of token ids or a list of strings and token ids");
    };
    std::vector<std::vector<engine::Token>> out;
    if (input.is_string() || (input.is_array() && !input.empty() && (all_ids(input) || mixed(input)))) {
        out.push_back(one(input));
    } else if (input.is_array()) {
        if (input.empty()) bad_request("'input' is empty");
        for (const auto& e : input) out.push_back(one(e));
    } else {
        bad_request("'input' must be a string or an array");
    }
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].empty()) bad_request("input " + std::to_string(i) + " is empty");
        if (out[i].size() > limit) bad_request("input " + std::to_string(i) + ": " + too_long(out[i].size()));
    }
    return out;
}

}  // namespace api
