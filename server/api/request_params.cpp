#include "server/api/request_params.h"

#include <cmath>
#include <limits>

#include "engine/grammar/json_schema.h"

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
            if (v.get<bool>()) bad_request("logit_bias: a bias of true is not meaningful (use false to ban a token)");
            return -std::numeric_limits<double>::infinity();
        }
        if (!v.is_number()) bad_request("logit_bias: biases must be numbers (or false to ban)");
        return v.get<double>();
    };
    if (lb.is_object()) {  // OpenAI form {"123": -100}
        for (const auto& [k, v] : lb.items()) {
            char* end = nullptr;
            const long long id = std::strtoll(k.c_str(), &end, 10);
            if (k.empty() || *end) bad_request("logit_bias: key '" + k + "' is not a token id");
            add_token(id, bias_value(v));
        }
    } else if (lb.is_array()) {  // llama.cpp form [[id or text, bias], ...]
        for (const auto& e : lb) {
            if (!e.is_array() || e.size() != 2) bad_request("logit_bias: entries must be [token, bias] pairs");
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
    std::vector<std::string> out;
    for (const auto& s : *f) {
        if (!s.is_string()) bad_request("'stop' must be a string or an array of strings");
        if (!s.get<std::string>().empty()) out.push_back(s.get<std::string>());
    }
    return out;
}

std::string schema_grammar(const json& schema) {
    try {
        return engine::json_schema_to_gbnf(schema);
    } catch (const std::exception& e) {
        bad_request(std::string("invalid JSON schema: ") + e.what());
    }
}

void parse_grammar(const json& body, GenerationOptions& o) {
    const auto grammar = get_opt<std::string>(body, "grammar");
    const json* schema = field(body, "json_schema");
    const json* rf = field(body, "response_format");
    int sources = (grammar ? 1 : 0) + (schema ? 1 : 0);
    if (rf) {
        if (!rf->is_object()) bad_request("'response_format' must be an object");
        const std::string type = rf->value("type", "text");
        if (type == "json_object") {
            ++sources;
            o.grammar = schema_grammar(rf->contains("schema") ? (*rf)["schema"] : json{{"type", "object"}});
        } else if (type == "json_schema") {
            ++sources;
            const json* js = field(*rf, "json_schema");
            json sch;
            if (js && js->is_object() && js->contains("schema"))
                sch = (*js)["schema"];
            else if (rf->contains("schema"))
                sch = (*rf)["schema"];
            else
                bad_request("response_format of type json_schema needs 'json_schema.schema'");
            o.grammar = schema_grammar(sch);
        } else if (type != "text") {
            bad_request("response_format.type must be 'text', 'json_object' or 'json_schema'");
        }
    }
    if (sources > 1) bad_request("use only one of 'grammar', 'json_schema' and 'response_format'");
    if (grammar) o.grammar = *grammar;
    if (schema) o.grammar = schema_grammar(*schema);

    read_into(body, "grammar_lazy", o.grammar_lazy);
    if (const json* tr = field(body, "grammar_triggers")) {
        if (!tr->is_array()) bad_request("'grammar_triggers' must be an array");
        for (const auto& t : *tr) {
            if (t.is_string()) {
                o.triggers.words.push_back(t.get<std::string>());
                continue;
            }
            if (!t.is_object()) bad_request("grammar_triggers entries must be objects");
            const std::string type = t.value("type", "word");
            const json value = t.contains("value") ? t["value"] : t.value("word", json());
            if (type == "token") {
                if (!value.is_number_integer()) bad_request("a token trigger needs an integer 'value'");
                o.triggers.tokens.push_back(value.get<engine::Token>());
            } else {
                if (!value.is_string()) bad_request("grammar trigger 'value' must be a string");
                if (type == "word") o.triggers.words.push_back(value.get<std::string>());
                else if (type == "pattern" || type == "pattern_full") o.triggers.patterns.push_back(value.get<std::string>());
                else bad_request("unknown grammar trigger type '" + type + "'");
            }
        }
    }
    if (o.grammar_lazy && o.grammar.empty()) bad_request("'grammar_lazy' needs a grammar");
    if (o.grammar_lazy && o.triggers.words.empty() && o.triggers.patterns.empty() && o.triggers.tokens.empty())
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

}  // namespace

GenerationOptions parse_generation_options(const json& body, const ApiDefaults& defaults, const engine::Vocab& vocab,
                                           Flavor flavor) {
    if (!body.is_object()) bad_request("the request body must be a JSON object");
    GenerationOptions o;
    o.n_predict = defaults.n_predict;
    o.sampling = defaults.sampling;
    parse_sampling(body, o.sampling, vocab);

    // Length limit: n_predict (native), max_tokens, max_completion_tokens (newer OpenAI name).
    for (const char* name : {"n_predict", "max_tokens", "max_completion_tokens"})
        if (auto v = get_opt<int32_t>(body, name)) {
            if (*v < -1 || (*v == 0 && flavor != Flavor::Native))
                bad_request(std::string("'") + name + "' must be " + (flavor == Flavor::Native ? ">= -1" : "positive"));
            o.n_predict = *v;
        }

    o.stop = parse_stop(body);
    read_into(body, "ignore_eos", o.ignore_eos);
    read_into(body, "cache_prompt", o.cache_prompt);
    read_into(body, "id_slot", o.id_slot);
    read_into(body, "stream", o.stream);
    read_into(body, "return_tokens", o.return_tokens);
    read_into(body, "post_sampling_probs", o.post_sampling_probs);
    if (const json* so = field(body, "stream_options")) {
        if (!so->is_object()) bad_request("'stream_options' must be an object");
        read_into(*so, "include_usage", o.include_usage);
    }
    if (auto n = get_opt<int32_t>(body, "n")) {
        if (*n < 1 || *n > 16) bad_request("'n' must be between 1 and 16");
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
    o.sampling.n_probs = n_probs;

    parse_grammar(body, o);
    if (const std::string err = engine::validate(o.sampling, vocab.n_tokens()); !err.empty()) bad_request(err);
    if (o.id_slot < -1) bad_request("'id_slot' must be -1 or a slot id");
    return o;
}

}  // namespace api
