// llama-server's reasoning options against the real binary (stories260K): --reasoning-budget N with
// --reasoning-budget-message (and the requests' reasoning_budget_tokens / thinking_budget_tokens /
// reasoning_budget_message), -rea on|off|auto, --reasoning-effort, --reasoning-preserve,
// --skip-chat-parsing and --prefill-assistant; their LLAMA_ARG_* variables, /props' server.reasoning, and
// bad values stopping startup with exit code 2.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "context_util.h"
#include "completion_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

// A template that opens the reasoning block in the prompt: stories260K then reasons until it is closed.
const char* const kThinkTemplate = "{% for m in messages %}{{ m.content }}\n{% endfor %}<think>\n";

// The template, written to a file that lives as long as this object.
class TemplateFile {
  public:
    explicit TemplateFile(const std::string& text) {
        const int fd = mkstemp(path_);
        REQUIRE(fd >= 0);
        REQUIRE(write(fd, text.data(), text.size()) == (ssize_t)text.size());
        close(fd);
    }
    ~TemplateFile() { std::remove(path_); }
    std::string path() const { return path_; }

  private:
    char path_[40] = "/tmp/ggserve_reasoning_tmpl_XXXXXX";
};

Client client(uint16_t port) { return Client("127.0.0.1", port, {std::chrono::seconds(120)}); }

json chat_body(int max_tokens) {
    return {{"messages", json::array({{{"role", "user"}, {"content", "Once upon a time"}}})},
            {"max_tokens", max_tokens},
            {"temperature", 0}};
}

json chat(Client& c, const json& body) {
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    return r.json()["choices"][0];
}

std::string rtrim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    return s;
}

std::string trim(std::string s) {
    s = rtrim(std::move(s));
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.erase(0, 1);
    return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The first n tokens of the greedy reasoning: the templated prompt through /completion.
std::string first_tokens(Client& c, int n) {
    const auto prompt = c.post("/apply-template", chat_body(1).dump());
    REQUIRE(prompt.status == 200);
    const auto r = c.post("/completion",
                          json{{"prompt", prompt.json()["prompt"]}, {"n_predict", n}, {"temperature", 0}}.dump());
    REQUIRE(r.status == 200);
    return rtrim(r.json()["content"]);
}

std::string apply_template(Client& c, const json& body) {
    const auto r = c.post("/apply-template", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    return r.json()["prompt"];
}

json user_turn(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

}  // namespace

TEST_CASE("reasoning budget N closes the reasoning after N tokens, the budget message right before the tag",
          "[integration][reasoning]") {
    TemplateFile tmpl(kThinkTemplate);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", tmpl.path(),
                     "--reasoning-budget", "6", "--reasoning-budget-message", "Time is up."});
    Client c = client(s.port());
    const std::string first6 = first_tokens(c, 6);
    REQUIRE_FALSE(first6.empty());

    const json limited = chat(c, chat_body(40));
    INFO(limited.dump());
    const std::string reasoning = limited["message"]["reasoning_content"];
    // Exactly the model's first 6 tokens of reasoning, then the message, then the block was closed.
    REQUIRE(reasoning.rfind(first6, 0) == 0);
    CHECK(ends_with(reasoning, "Time is up."));
    CHECK(trim(reasoning.substr(first6.size())) == "Time is up.");  // nothing between the two
    CHECK_FALSE(limited["message"]["content"].get<std::string>().empty());  // the reply went on after it
    CHECK(limited["message"]["content"].get<std::string>().find("</think>") == std::string::npos);

    // Streamed: the same reasoning and content.
    const completion_util::StreamedChat sr = completion_util::stream_chat(c, chat_body(40));
    REQUIRE(sr.complete);
    CHECK(sr.reasoning == reasoning);
    CHECK(sr.content == limited["message"]["content"]);

    // The request's fields: reasoning_budget_tokens, thinking_budget_tokens, -1 (the server's budget),
    // reasoning_budget_message.
    json body = chat_body(40);
    body["thinking_budget_tokens"] = 3;
    const std::string first3 = first_tokens(c, 3);
    const std::string r3 = chat(c, body)["message"]["reasoning_content"];
    REQUIRE(r3.rfind(first3, 0) == 0);
    CHECK(r3.find(first6) == std::string::npos);
    CHECK(trim(r3.substr(first3.size())) == "Time is up.");
    body["reasoning_budget_tokens"] = -1;  // the server's budget; thinking_budget_tokens is read next
    CHECK(chat(c, body)["message"]["reasoning_content"] == r3);
    body.erase("thinking_budget_tokens");
    CHECK(chat(c, body)["message"]["reasoning_content"] == reasoning);
    body["reasoning_budget_tokens"] = 3;
    body["reasoning_budget_message"] = "";
    const json r3_plain = chat(c, body);
    CHECK(r3_plain["message"]["reasoning_content"] == first3);
    CHECK_FALSE(r3_plain["message"]["content"].get<std::string>().empty());
    // Budget 0: the block is closed at once; only the message is reasoning.
    body["reasoning_budget_tokens"] = 0;
    body["reasoning_budget_message"] = "No time.";
    const json r0 = chat(c, body);
    CHECK(trim(r0["message"]["reasoning_content"]) == "No time.");
    CHECK_FALSE(r0["message"]["content"].get<std::string>().empty());

    for (const json& bad : {json{{"reasoning_budget_tokens", -2}}, json{{"thinking_budget_tokens", "lots"}},
                            json{{"reasoning_budget_message", 3}}}) {
        json b = chat_body(4);
        b.update(bad);
        const auto r = c.post("/v1/chat/completions", b.dump());
        INFO(b.dump() << " -> " << r.body);
        CHECK(r.status == 400);
    }

    const json props = json::parse(c.get("/props").body);
    CHECK(props["server"]["reasoning"]["budget"] == 6);
    CHECK(props["server"]["reasoning"]["budget_message"] == "Time is up.");
}

// llama-server's chat grammar for a response format keeps the template's reasoning block before the value
// (a reply that reasons first can still answer in the format), and the reply's content is the value alone.
TEST_CASE("a response format follows the reasoning: the reply reasons then writes the value as its content",
          "[integration][reasoning][structured]") {
    TemplateFile tmpl(kThinkTemplate);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", tmpl.path(),
                     "--reasoning-budget", "6"});
    Client c = client(s.port());
    json body = chat_body(120);
    body["response_format"] = {
        {"type", "json_schema"},
        {"json_schema",
         {{"name", "n"},
          {"schema",
           {{"type", "object"},
            {"properties", {{"a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 9}}}}},
            {"required", {"a"}}}}}}};
    const json choice = chat(c, body);
    INFO(choice.dump());
    const std::string first6 = first_tokens(c, 6);
    CHECK(choice["message"]["reasoning_content"].get<std::string>().rfind(first6, 0) == 0);
    const std::string content = choice["message"]["content"];
    const json value = json::parse(content);  // the value alone: no whitespace or fence around it
    CHECK(content.front() == '{');
    CHECK(content.back() == '}');
    CHECK(value["a"].is_number_integer());
    const completion_util::StreamedChat sr = completion_util::stream_chat(c, body);
    REQUIRE(sr.complete);
    CHECK(sr.content == content);
    CHECK(sr.reasoning == choice["message"]["reasoning_content"]);
}

TEST_CASE("reasoning control: a running chat told reasoning_end closes its reasoning and answers, "
          "other ids and actions change nothing",
          "[integration][reasoning]") {
    TemplateFile tmpl(kThinkTemplate);
    // A long reply, so that the control surely arrives while it runs even on a loaded machine.
    ServerProcess s({"-m", stories_model(), "-c", "4096", "-t", "1", "--chat-template-file", tmpl.path()});
    Client c = client(s.port());
    Client ctl = client(s.port());
    const std::string greedy = first_tokens(c, 3000);  // what the model reasons when nothing stops it

    json body = chat_body(3000);
    body["reasoning_control"] = true;
    body["reasoning_budget_message"] = "Told to stop.";
    body["stream"] = true;
    std::string id, reasoning, content, finish;
    json control;
    const auto sr = c.stream("POST", "/v1/chat/completions", body.dump(), {}, [&](const server::http::SseEvent& e) {
        if (e.data == "[DONE]") return true;
        const json j = json::parse(e.data);
        if (j["choices"].empty()) return true;
        id = j["id"];
        const json& d = j["choices"][0]["delta"];
        if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
        if (d.contains("content") && d["content"].is_string()) content += d["content"].get<std::string>();
        if (j["choices"][0]["finish_reason"].is_string()) finish = j["choices"][0]["finish_reason"];
        if (control.is_null() && !reasoning.empty()) {  // told as soon as it reasons
            const auto r = ctl.post("/v1/chat/completions/control", json{{"id", id}, {"action", "reasoning_end"}}.dump());
            REQUIRE(r.status == 200);
            control = r.json();
        }
        return true;
    });
    REQUIRE(sr.complete);
    INFO(reasoning << " | " << content);
    CHECK(control["applied"] == true);
    CHECK(control["id"] == id);
    // The model's own greedy reasoning up to where it was told, then the message; then it answered.
    REQUIRE(ends_with(reasoning, "Told to stop."));
    const std::string own = rtrim(reasoning.substr(0, reasoning.size() - std::string("Told to stop.").size()));
    CHECK_FALSE(own.empty());
    CHECK(greedy.rfind(own, 0) == 0);
    CHECK(own.size() < greedy.size());
    CHECK_FALSE(content.empty());
    CHECK(content.find("</think>") == std::string::npos);

    // Armed but never told: the same reply as without reasoning_control (the block never closes).
    json armed = chat_body(60);
    armed["reasoning_control"] = true;
    const json untold = chat(c, armed);
    CHECK(untold["message"]["reasoning_content"] == chat(c, chat_body(60))["message"]["reasoning_content"]);

    // The finished request, an unknown id: nothing to do. A bad action or body: 400.
    auto post = [&](const json& b) { return ctl.post("/v1/chat/completions/control", b.dump()); };
    CHECK(post({{"id", id}, {"action", "reasoning_end"}}).json()["applied"] == false);
    CHECK(post({{"id", "chatcmpl-nope"}, {"action", "reasoning_end"}}).json()["applied"] == false);
    CHECK(ctl.post("/chat/completions/control", json{{"id", "x"}, {"action", "reasoning_end"}}.dump()).status == 200);
    const auto bad = post({{"id", id}, {"action", "stop"}});
    CHECK(bad.status == 400);
    CHECK(bad.json()["error"]["message"].get<std::string>().find("unknown control action") != std::string::npos);
    CHECK(post({{"action", "reasoning_end"}}).status == 400);
    CHECK(post({{"id", 7}, {"action", "reasoning_end"}}).status == 400);
    json wrong = chat_body(4);
    wrong["reasoning_control"] = "yes";
    CHECK(c.post("/v1/chat/completions", wrong.dump()).status == 400);
}

TEST_CASE("without a budget the reasoning is unrestricted, and a request's budget limits it alone",
          "[integration][reasoning]") {
    TemplateFile tmpl(kThinkTemplate);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", tmpl.path()});
    Client c = client(s.port());
    const json unlimited = chat(c, chat_body(30));
    CHECK(unlimited["finish_reason"] == "length");
    CHECK(unlimited["message"]["content"] == "");  // stories260K never closes the block by itself
    const std::string all = unlimited["message"]["reasoning_content"];

    json body = chat_body(30);
    body["reasoning_budget_tokens"] = 4;
    const json limited = chat(c, body);
    CHECK(limited["message"]["reasoning_content"] == first_tokens(c, 4));  // no message by default
    CHECK(all.rfind(limited["message"]["reasoning_content"].get<std::string>(), 0) == 0);
    CHECK_FALSE(limited["message"]["content"].get<std::string>().empty());
    CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["budget"] == -1);
}

TEST_CASE("reasoning on, off, auto and the reasoning effort set the template's variables, the request's win",
          "[integration][reasoning]") {
    const std::string qwen3 = shared_path("templates/Qwen-Qwen3-0.6B.jinja");
    const json hi = {{"messages", json::array({user_turn("hi")})}};
    const std::string no_think = "<think>\n\n</think>";  // Qwen 3's prompt when thinking is off
    {
        ServerProcess off({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", qwen3, "-rea", "off"});
        Client c = client(off.port());
        CHECK(apply_template(c, hi).find(no_think) != std::string::npos);
        json on = hi;
        on["chat_template_kwargs"] = {{"enable_thinking", true}};
        CHECK(apply_template(c, on).find(no_think) == std::string::npos);
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["reasoning"] == "off");
        // The chat endpoint renders the same prompts: the empty block makes the one with thinking off longer.
        const auto prompt_tokens = [&](json req) {
            req["max_tokens"] = 1;
            const auto r = c.post("/v1/chat/completions", req.dump());
            REQUIRE(r.status == 200);
            return r.json()["usage"]["prompt_tokens"].get<int>();
        };
        CHECK(prompt_tokens(hi) > prompt_tokens(on));
    }
    for (const char* value : {"on", "auto"}) {
        INFO(value);
        // Given by its environment variable.
        ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", qwen3},
                        std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {std::string("LLAMA_ARG_REASONING=") + value});
        Client c = client(s.port());
        CHECK(apply_template(c, hi).find(no_think) == std::string::npos);
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["reasoning"] == value);
    }
    {
        // gpt-oss reads reasoning_effort (its default is medium); xhigh is its high.
        ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file",
                         shared_path("templates/openai-gpt-oss-120b.jinja"), "--reasoning-effort", "xhigh"});
        Client c = client(s.port());
        CHECK(apply_template(c, hi).find("Reasoning: high") != std::string::npos);
        json low = hi;
        low["chat_template_kwargs"] = {{"reasoning_effort", "low"}};
        CHECK(apply_template(c, low).find("Reasoning: low") != std::string::npos);
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["effort"] == "xhigh");
    }
    {
        ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", qwen3},
                        std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {"LLAMA_ARG_REASONING_EFFORT=none"});
        Client c = client(s.port());
        CHECK(apply_template(c, hi).find(no_think) != std::string::npos);
    }
}

TEST_CASE("reasoning preserve keeps earlier turns' reasoning in templates that can drop it, "
          "and off drops it",
          "[integration][reasoning]") {
    const std::string glm = shared_path("templates/GLM-4.7-Flash.jinja");
    const json conversation = {
        {"messages",
         json::array({user_turn("hi"),
                      {{"role", "assistant"}, {"content", "Hello."}, {"reasoning_content", "They greet me."}},
                      user_turn("bye")})}};
    {
        ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", glm});
        Client c = client(s.port());
        CHECK(apply_template(c, conversation).find("They greet me.") != std::string::npos);  // the default
        json dropped = conversation;
        dropped["chat_template_kwargs"] = {{"clear_thinking", true}};  // the request's variable wins
        CHECK(apply_template(c, dropped).find("They greet me.") == std::string::npos);
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["preserve"] == true);
    }
    for (const bool by_env : {false, true}) {
        INFO("environment: " << by_env);
        std::vector<std::string> args = {"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", glm};
        std::vector<std::string> env;
        if (by_env) {
            env.push_back("LLAMA_ARG_REASONING_PRESERVE=false");
        } else {
            args.push_back("--no-reasoning-preserve");
        }
        ServerProcess s(args, std::chrono::seconds(60), ServerProcess::WaitFor::Ready, env);
        Client c = client(s.port());
        const std::string prompt = apply_template(c, conversation);
        CHECK(prompt.find("They greet me.") == std::string::npos);
        CHECK(prompt.find("Hello.") != std::string::npos);
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["preserve"] == false);
    }
}

TEST_CASE("skip chat parsing leaves reasoning and tool calls in content", "[integration][reasoning]") {
    TemplateFile tmpl(kThinkTemplate);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", tmpl.path(),
                     "--reasoning-budget", "2"},
                    std::chrono::seconds(60), ServerProcess::WaitFor::Ready, {"LLAMA_ARG_SKIP_CHAT_PARSING=1"});
    Client c = client(s.port());
    const json plain = chat(c, chat_body(12));
    CHECK_FALSE(plain["message"].contains("reasoning_content"));
    CHECK(rtrim(plain["message"]["content"]) == first_tokens(c, 12));  // no budget either: the model's own text

    // A forced tool call is neither constrained nor parsed.
    json body = chat_body(8);
    body["tools"] = json::array({{{"type", "function"},
                                  {"function", {{"name", "pick"}, {"parameters", {{"type", "object"}}}}}}});
    body["tool_choice"] = "required";
    const json untouched = chat(c, body);
    CHECK_FALSE(untouched["message"].contains("tool_calls"));
    CHECK(untouched["finish_reason"] == "length");
    CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["skip_chat_parsing"] == true);
}

TEST_CASE("prefill assistant continues a final assistant message, off starts a new turn",
          "[integration][reasoning]") {
    const std::string qwen25 = shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja");
    const json conversation = {
        {"messages", json::array({user_turn("Tell me a story"), {{"role", "assistant"}, {"content", "Once upon"}}})},
        {"max_tokens", 8},
        {"temperature", 0}};
    {
        ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file", qwen25});
        Client c = client(s.port());
        const std::string prompt = apply_template(c, conversation);
        CHECK(ends_with(prompt, "Once upon"));
        CHECK(prompt.find("<|im_start|>assistant\nOnce upon") != std::string::npos);
        // The reply continues it: the same tokens as /completion of that prompt.
        const auto direct = c.post(
            "/completion", json{{"prompt", prompt}, {"n_predict", 8}, {"temperature", 0}}.dump());
        REQUIRE(direct.status == 200);
        CHECK(chat(c, conversation)["message"]["content"] == direct.json()["content"]);
        // A final assistant message with tool calls is a finished turn.
        json with_call = conversation;
        with_call["messages"][1]["tool_calls"] = json::array(
            {{{"id", "call_1"}, {"type", "function"}, {"function", {{"name", "pick"}, {"arguments", "{}"}}}}});
        const std::string call_prompt = apply_template(c, with_call);
        CHECK_FALSE(ends_with(call_prompt, "Once upon"));
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["prefill_assistant"] == true);
    }
    for (const bool by_env : {false, true}) {
        INFO("environment: " << by_env);
        std::vector<std::string> args = {"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file", qwen25};
        std::vector<std::string> env;
        if (by_env) {
            env.push_back("LLAMA_ARG_PREFILL_ASSISTANT=false");
        } else {
            args.push_back("--no-prefill-assistant");
        }
        ServerProcess s(args, std::chrono::seconds(60), ServerProcess::WaitFor::Ready, env);
        Client c = client(s.port());
        const std::string prompt = apply_template(c, conversation);
        CHECK(prompt.find("Once upon<|im_end|>") != std::string::npos);
        CHECK(ends_with(prompt, "<|im_start|>assistant\n"));
        CHECK(json::parse(c.get("/props").body)["server"]["reasoning"]["prefill_assistant"] == false);
    }
}

TEST_CASE("a prefill continues the final assistant turn as the template renders it (HF continue_final_message)",
          "[integration][reasoning]") {
    const json conversation = {
        {"messages", json::array({user_turn("Write a haiku."), {{"role", "assistant"}, {"content", "Autumn moonlight"}}})},
        {"max_tokens", 4},
        {"temperature", 0}};
    {
        // Qwen3 closes an empty think block before a final assistant turn's text: the prefill is the reply's
        // content, not the start of its reasoning (it followed the bare generation prompt before).
        ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file",
                         shared_path("templates/Qwen-Qwen3-0.6B.jinja")});
        Client c = client(s.port());
        const std::string prompt = apply_template(c, conversation);
        CHECK(ends_with(prompt, "<|im_start|>assistant\n<think>\n\n</think>\n\nAutumn moonlight"));
        // Without a generation prompt the final assistant message is continued all the same (llama-server).
        json no_gen = conversation;
        no_gen["add_generation_prompt"] = false;
        CHECK(apply_template(c, no_gen) == prompt);
        const json reply = chat(c, conversation);
        CHECK_FALSE(reply["message"].contains("reasoning_content"));
        // The continued turn's own reasoning is rendered with it, as llama-server 0.7.0 renders it.
        json reasoned = conversation;
        reasoned["messages"][1]["reasoning_content"] = "Count syllables.";
        CHECK(ends_with(apply_template(c, reasoned),
                        "<|im_start|>assistant\n<think>\nCount syllables.\n</think>\n\nAutumn moonlight"));
    }
    {
        // Bielik's generation prompt opens <think>: the prefill went inside it, and the reply was reasoning.
        ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file",
                         shared_path("templates/Bielik-11B-v3.0-Instruct.jinja")});
        Client c = client(s.port());
        const std::string prompt = apply_template(c, conversation);
        CHECK(ends_with(prompt, "<|im_start|>assistant\nAutumn moonlight"));
        CHECK(prompt.find("<think>") == std::string::npos);
    }
}

TEST_CASE("bad reasoning values stop startup with exit code 2 and the reason", "[integration][reasoning]") {
    struct Case {
        std::vector<std::string> args, env;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"-rea", "maybe"}, {}, "maybe"},
        {{"--reasoning", "Off"}, {}, "on, off or auto"},
        {{}, {"LLAMA_ARG_REASONING=sometimes"}, "LLAMA_ARG_REASONING"},
        {{"--reasoning-effort", "extreme"}, {}, "extreme"},
        {{}, {"LLAMA_ARG_REASONING_EFFORT=lots"}, "LLAMA_ARG_REASONING_EFFORT"},
        {{"--reasoning-budget", "-2"}, {}, "--reasoning-budget"},
        {{}, {"LLAMA_ARG_THINK_BUDGET=many"}, "LLAMA_ARG_THINK_BUDGET"},
    };
    for (const auto& k : cases) {
        std::vector<std::string> args = {"serve", "-m", stories_model(), "--port", "0"};
        args.insert(args.end(), k.args.begin(), k.args.end());
        const auto r = ctxtest::run_cli(args, k.env);
        INFO(r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find("listening") == std::string::npos);
        CHECK(r.err.find(k.says) != std::string::npos);
    }
    const auto help = ctxtest::run_cli({"serve", "--help"});
    for (const char* name : {"LLAMA_ARG_REASONING)", "LLAMA_ARG_REASONING_EFFORT", "LLAMA_ARG_THINK_BUDGET_MESSAGE",
                             "LLAMA_ARG_REASONING_PRESERVE", "LLAMA_ARG_SKIP_CHAT_PARSING",
                             "LLAMA_ARG_PREFILL_ASSISTANT"})
        CHECK(help.out.find(name) != std::string::npos);
}
