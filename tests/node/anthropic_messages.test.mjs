// The official Anthropic TypeScript SDK on a real ggserve (stories260K with Qwen 2.5's template, --api-key
// sent as x-api-key): messages.create, plain and streamed, and the messages.stream helper give the text chat
// completions gives for the same conversation (greedy); tools with tool_choice "any" come back as tool_use
// blocks whose input follows the schema, streamed the same; the tool_result turn goes back; countTokens counts
// the prompt; a bad request and a wrong key are the SDK's typed errors.
// Usage: node anthropic_messages.test.mjs <ggserve binary> <model.gguf> <template>
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { startServer as serve } from "./serve.mjs";

const [binary, model, template] = process.argv.slice(2);
const API_KEY = "sk-ant-test";

const startServer = () => serve(binary, ["-m", model, "--port", "0", "-c", "2048", "-t", "1", "--api-key", API_KEY,
                              "--chat-template-file", template]);

const tools = [{
  name: "get_weather", description: "Get the weather.",
  input_schema: { type: "object", properties: { city: { type: "string", maxLength: 16 }, days: { type: "integer", minimum: 1, maximum: 7 } },
                  required: ["city", "days"], additionalProperties: false },
}];

function checkInput(input) {
  assert.deepEqual(Object.keys(input).sort(), ["city", "days"]);
  assert.equal(typeof input.city, "string");
  assert.ok(input.city.length <= 16, JSON.stringify(input));
  assert.ok(Number.isInteger(input.days) && input.days >= 1 && input.days <= 7, JSON.stringify(input));
}

const textOf = (message) => message.content.filter((b) => b.type === "text").map((b) => b.text).join("");

const { proc, url } = await startServer();
try {
  const client = new Anthropic({ baseURL: url, apiKey: API_KEY });
  const model = "stories260K.gguf";
  const messages = [{ role: "user", content: "Once upon a time" }];

  const chatReply = await fetch(`${url}/v1/chat/completions`, {
    method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ messages, max_tokens: 24, temperature: 0 }),
  }).then((r) => r.json());
  const expected = chatReply.choices[0].message.content;
  assert.ok(expected.length > 0);

  const request = { model, max_tokens: 24, temperature: 0, messages };
  const message = await client.messages.create(request);
  assert.equal(message.type, "message");
  assert.equal(message.role, "assistant");
  assert.ok(message.id.startsWith("msg_"));
  assert.equal(textOf(message), expected);
  assert.equal(message.stop_reason, "max_tokens");
  assert.equal(message.usage.output_tokens, 24);
  const counted = await client.messages.countTokens({ model, messages });
  assert.equal(counted.input_tokens, message.usage.input_tokens + message.usage.cache_read_input_tokens);
  assert.equal(counted.input_tokens, chatReply.usage.prompt_tokens);

  // Streamed: raw events, then the SDK's stream helper, which assembles the final message.
  const raw = await client.messages.create({ ...request, stream: true });
  let text = "";
  const types = [];
  for await (const event of raw) {
    types.push(event.type);
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
  }
  assert.equal(text, expected);
  assert.equal(types[0], "message_start");
  assert.equal(types.at(-2), "message_delta");
  assert.equal(types.at(-1), "message_stop");
  const streamed = await client.messages.stream(request).finalMessage();
  assert.equal(textOf(streamed), expected);
  assert.equal(streamed.stop_reason, "max_tokens");
  assert.equal(streamed.usage.output_tokens, 24);

  // Stop sequences.
  const cut = expected.slice(8, 11);
  const stopped = await client.messages.create({ ...request, stop_sequences: [cut] });
  assert.equal(stopped.stop_reason, "stop_sequence");
  assert.equal(stopped.stop_sequence, cut);
  assert.equal(textOf(stopped), expected.slice(0, expected.indexOf(cut)));

  // Tools: tool_choice any forces a call.
  const toolRequest = { model, max_tokens: 200, temperature: 1.0, seed: 3,
                        messages: [{ role: "user", content: "What is the weather in Paris?" }],
                        tools, tool_choice: { type: "any", disable_parallel_tool_use: true } };
  const called = await client.messages.create(toolRequest);
  assert.equal(called.stop_reason, "tool_use");
  const uses = called.content.filter((b) => b.type === "tool_use");
  assert.equal(uses.length, 1);
  assert.equal(uses[0].name, "get_weather");
  assert.ok(uses[0].id.startsWith("toolu_"));
  checkInput(uses[0].input);
  const streamedCall = await client.messages.stream(toolRequest).finalMessage();
  assert.equal(streamedCall.stop_reason, "tool_use");
  const streamedUses = streamedCall.content.filter((b) => b.type === "tool_use");
  assert.equal(streamedUses.length, 1);
  assert.deepEqual(streamedUses[0].input, uses[0].input);  // same seed, same call

  // The tool_result turn.
  const followMessages = [...toolRequest.messages, { role: "assistant", content: called.content },
                          { role: "user", content: [{ type: "tool_result", tool_use_id: uses[0].id, content: "Sunny, 24 degrees" }] }];
  const follow = await client.messages.create({ model, max_tokens: 16, temperature: 0, tools, messages: followMessages });
  assert.ok(["end_turn", "max_tokens"].includes(follow.stop_reason));
  const followCount = await client.messages.countTokens({ model, tools, messages: followMessages });
  assert.equal(followCount.input_tokens, follow.usage.input_tokens + follow.usage.cache_read_input_tokens);

  // Errors: typed by the SDK from Anthropic's error shape.
  await assert.rejects(client.messages.create({ ...request, messages: [{ role: "user", content: [
    { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }),
    (e) => e instanceof Anthropic.BadRequestError && e.error?.error?.type === "invalid_request_error" && /image/.test(e.message));
  const wrongKey = new Anthropic({ baseURL: url, apiKey: "sk-wrong", maxRetries: 0 });
  await assert.rejects(wrongKey.messages.create(request), (e) => e instanceof Anthropic.AuthenticationError);
  console.log("anthropic messages client: ok");
} finally {
  proc.kill("SIGTERM");
}
