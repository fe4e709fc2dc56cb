// Capability probes: render small conversations carrying "needle" strings and look for them in
// the output. A template that raises, or renders a needle the wrong way, lacks the capability.
#include "engine/chat/chat_template.h"

namespace engine::chat {

namespace {

const char* const kSystemNeedle = "<system_needle>";
const char* const kToolName = "tool_needle_fn";
const char* const kArgName = "arg_needle";
const char* const kTypedNeedle = "typed_needle";
const char* const kReasoningNeedle = "reasoning_needle";

Json probe_tools() {
    return Json::parse(
        R"([{"type": "function", "function": {"name": "tool_needle_fn", "description": "A probe.",
        "parameters": {"type": "object", "properties": {"probe_param": {"type": "string", "description": "An argument."}},
        "required": ["probe_param"]}}}])");
}

Json tool_call_conversation(const Json& arguments, const Json& content) {
    Json call = {{"id", "call00001"},
                 {"type", "function"},
                 {"function", {{"name", kToolName}, {"arguments", arguments}}}};
    return Json::array({
        {{"role", "user"}, {"content", "Hey"}},
        {{"role", "assistant"}, {"content", content}, {"tool_calls", Json::array({call})}},
        {{"role", "tool"}, {"tool_call_id", "call00001"}, {"name", kToolName}, {"content", "tool_result"}},
        {{"role", "assistant"}, {"content", "Done."}},
        {{"role", "user"}, {"content", "Thanks"}},
    });
}

bool contains(const std::string& s, const std::string& needle) {
    return s.find(needle) != std::string::npos;
}

}  // namespace

void ChatTemplate::probe_caps() {
    const jinja::RenderOptions options;
    const Json no_extra = Json::object();
    auto try_render = [&](const Json& messages, const Json& tools) -> std::optional<std::string> {
        try {
            return render_raw(messages, tools, true, no_extra, options);
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    // A template that cannot render a lone user turn needs variables we do not know about: the
    // probes would say nothing, so keep the defaults.
    const auto plain = try_render(Json::array({{{"role", "user"}, {"content", "Hey"}}}), Json());
    if (!plain) return;
    caps_.supports_string_content = contains(*plain, "Hey");

    const auto sys = try_render(Json::array({{{"role", "system"}, {"content", kSystemNeedle}},
                                             {{"role", "user"}, {"content", "Hey"}}}),
                                Json());
    caps_.supports_system_role = sys && contains(*sys, kSystemNeedle);

    const Json tools = probe_tools();
    const auto with_tools = try_render(Json::array({{{"role", "user"}, {"content", "Hey"}}}), tools);
    caps_.supports_tools = with_tools && contains(*with_tools, kToolName);

    // A tool call is rendered when its argument shows up: as JSON or per-argument markup for
    // object arguments (a Python repr means the template wanted a string), or as the JSON string.
    const Json object_args = {{kArgName, "value"}};
    const std::string repr_key = std::string("'") + kArgName + "'";
    for (const Json& content : {Json(""), Json()}) {
        const auto as_object = try_render(tool_call_conversation(object_args, content), tools);
        if (as_object && contains(*as_object, kArgName) && !contains(*as_object, repr_key)) {
            caps_.supports_tool_calls = true;
            caps_.object_arguments = true;
        } else if (const auto as_string =
                       try_render(tool_call_conversation(object_args.dump(), content), tools);
                   as_string && contains(*as_string, kArgName)) {
            caps_.supports_tool_calls = true;
            caps_.object_arguments = false;
        }
        if (caps_.supports_tool_calls) {
            caps_.null_content_with_tool_calls = content.is_null();
            break;
        }
    }

    // Tool results: the call is rendered the way the template takes it (or as text when it cannot).
    Json results_probe = tool_call_conversation(
        caps_.object_arguments ? object_args : Json(object_args.dump()),
        caps_.null_content_with_tool_calls ? Json() : Json(""));
    if (!caps_.supports_tool_calls) {
        results_probe[1].erase("tool_calls");
        results_probe[1]["content"] = "Calling the tool.";
    }
    const auto results = try_render(results_probe, tools);
    caps_.supports_tool_responses = results && contains(*results, "tool_result");

    // Two calls in one turn: both arguments must show up.
    if (caps_.supports_tool_calls) {
        Json two = tool_call_conversation(
            caps_.object_arguments ? object_args : Json(object_args.dump()),
            caps_.null_content_with_tool_calls ? Json() : Json(""));
        Json second = two[1]["tool_calls"][0];
        second["id"] = "call00002";
        const Json second_args = {{kArgName, "second_value"}};
        second["function"]["arguments"] = caps_.object_arguments ? second_args : Json(second_args.dump());
        two[1]["tool_calls"].push_back(second);
        const auto out = try_render(two, tools);
        caps_.supports_parallel_tool_calls = out && contains(*out, "second_value");
    }

    // Reasoning of an earlier assistant turn, kept in the history.
    const auto kept = try_render(Json::array({{{"role", "user"}, {"content", "Hey"}},
                                              {{"role", "assistant"},
                                               {"content", "Hello."},
                                               {"reasoning_content", kReasoningNeedle}},
                                              {{"role", "user"}, {"content", "Again"}}}),
                                 Json());
    caps_.supports_preserve_reasoning = kept && contains(*kept, kReasoningNeedle);
    caps_.supports_reasoning_effort = contains(source_, "reasoning_effort");

    const Json typed = Json::array({{{"type", "text"}, {"text", kTypedNeedle}}});
    const auto typed_out = try_render(Json::array({{{"role", "user"}, {"content", typed}}}), Json());
    caps_.supports_typed_content = typed_out && contains(*typed_out, kTypedNeedle) &&
                                   !contains(*typed_out, "'type'") && !contains(*typed_out, "\"type\"");
}

}  // namespace engine::chat
