// The official OpenAI Node.js client calling tools on a real ggserve: stories260K with Qwen 2.5's
// Hermes-style template; tool_choice "required" forces a call, read back as message.tool_calls and
// as streamed tool_call deltas. Usage: node openai_tools.test.mjs <ggserve binary> <model.gguf> <template>
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer as serve } from "./serve.mjs";

const [binary, model, template] = process.argv.slice(2);

const startServer = () => serve(binary, ["-m", model, "--port", "0", "-c", "2048", "-t", "1",
                              "--chat-template-file", template]);

const tools = [{
  type: "function",
  function: {
    name: "get_weather", description: "Get the weather.",
    parameters: { type: "object", properties: { city: { type: "string", maxLength: 16 }, days: { type: "integer", minimum: 1, maximum: 7 } },
                  required: ["city", "days"], additionalProperties: false },
  },
}];

function checkArguments(text) {
  const args = JSON.parse(text);
  assert.deepEqual(Object.keys(args).sort(), ["city", "days"]);
  assert.equal(typeof args.city, "string");
  assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7, text);
}

const { proc, url } = await startServer();
try {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused" });
  const request = { model: "stories260K.gguf", messages: [{ role: "user", content: "Weather in Paris?" }], tools,
                    tool_choice: "required", parallel_tool_calls: false, max_tokens: 200, seed: 3 };

  const reply = await client.chat.completions.create(request);
  assert.equal(reply.choices[0].finish_reason, "tool_calls");
  const calls = reply.choices[0].message.tool_calls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].type, "function");
  assert.equal(calls[0].function.name, "get_weather");
  assert.ok(calls[0].id.startsWith("call_"));
  checkArguments(calls[0].function.arguments);

  // Streamed: the same call assembled from tool_calls deltas; nothing of it in content.
  const stream = await client.chat.completions.create({ ...request, stream: true });
  let content = "", name = "", args = "", id = "", finish = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    finish = choice.finish_reason ?? finish;
    content += choice.delta.content ?? "";
    for (const tc of choice.delta.tool_calls ?? []) {
      assert.equal(tc.index, 0);
      id = tc.id ?? id;
      name += tc.function?.name ?? "";
      args += tc.function?.arguments ?? "";
    }
  }
  assert.equal(finish, "tool_calls");
  assert.equal(content, "");
  assert.equal(name, "get_weather");
  assert.ok(id.startsWith("call_"));
  assert.equal(args, calls[0].function.arguments);  // same seed, same call
  checkArguments(args);
  console.log("openai tools client: ok");
} finally {
  proc.kill("SIGTERM");
}
