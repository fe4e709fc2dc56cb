// Conversations shared by the chat template tests.
#pragma once

#include <nlohmann/json.hpp>

namespace chat_test {

// system, user, assistant, user
inline nlohmann::ordered_json basic_conversation() {
    return nlohmann::ordered_json::parse(R"([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi there. How can I help?"},
        {"role": "user", "content": "What is 2+2?"}])");
}

inline nlohmann::ordered_json weather_tools() {
    return nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "get_weather",
        "description": "Get the weather.", "parameters": {"type": "object", "properties":
        {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}])");
}

// A tool round trip as an OpenAI client sends it: arguments as a JSON string, content null.
inline nlohmann::ordered_json tool_conversation() {
    return nlohmann::ordered_json::parse(R"([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "abc123xyz", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "abc123xyz", "name": "get_weather", "content": "{\"temp\": 21}"},
        {"role": "assistant", "content": "It is 21 degrees."},
        {"role": "user", "content": "Thanks!"}])");
}

}  // namespace chat_test
