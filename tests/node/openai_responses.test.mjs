// The official OpenAI Node.js client's Responses API on a real ggserve: stories260K with Qwen 2.5's
// template. responses.create (plain and streamed, and the responses.stream helper) gives the text chat
// completions gives for the same input (greedy); a function tool with tool_choice "required" comes back as a
// function_call item whose arguments follow the schema, streamed the same; the call and its
// function_call_output go back as input; inputTokens.count counts the prompt; stored responses are refused.
// Usage: node openai_responses.test.mjs <ggserve binary> <model.gguf> <template>
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer as serve } from "./serve.mjs";

const [binary, model, template] = process.argv.slice(2);
const API_KEY = "sk-responses-test";

const startServer = () => serve(binary, ["-m", model, "--port", "0", "-c", "2048", "-t", "1", "--api-key", API_KEY,
                              "--chat-template-file", template]);

const tools = [{
  type: "function", name: "get_weather", description: "Get the weather.", strict: true,
  parameters: { type: "object", properties: { city: { type: "string", maxLength: 16 }, days: { type: "integer", minimum: 1, maximum: 7 } },
                required: ["city", "days"], additionalProperties: false },
}];

function checkArguments(text) {
  const args = JSON.parse(text);
  assert.deepEqual(Object.keys(args).sort(), ["city", "days"]);
  assert.equal(typeof args.city, "string");
  assert.ok(args.city.length <= 16, text);
  assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7, text);
}

const { proc, url } = await startServer();
try {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY });
  const model = "stories260K.gguf";

  // Text: the same as chat completions for the same conversation, greedy.
  const chat = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Once upon a time" }],
                                                      max_tokens: 24, temperature: 0 });
  const expected = chat.choices[0].message.content;
  assert.ok(expected.length > 0);
  const request = { model, input: "Once upon a time", max_output_tokens: 24, temperature: 0 };
  const response = await client.responses.create(request);
  assert.equal(response.object, "response");
  assert.ok(response.id.startsWith("resp_"));
  assert.equal(response.output_text, expected);
  assert.equal(response.status, "incomplete");
  assert.equal(response.incomplete_details.reason, "max_output_tokens");
  assert.equal(response.usage.input_tokens, chat.usage.prompt_tokens);
  assert.equal(response.usage.output_tokens, 24);

  // Streamed: raw events, then the SDK's stream helper, which checks the event sequence as it assembles.
  const events = await client.responses.create({ ...request, stream: true });
  let text = "", types = [], last = null;
  for await (const event of events) {
    types.push(event.type);
    if (event.type === "response.output_text.delta") text += event.delta;
    last = event;
  }
  assert.equal(text, expected);
  assert.equal(types[0], "response.created");
  assert.equal(types[1], "response.in_progress");
  assert.ok(types.includes("response.output_item.added"));
  assert.ok(types.includes("response.content_part.added"));
  assert.ok(types.includes("response.output_text.done"));
  assert.equal(last.type, "response.incomplete");
  assert.equal(last.response.output[0].content[0].text, expected);
  const helper = client.responses.stream(request);
  let helperText = "";
  helper.on("response.output_text.delta", (e) => { helperText += e.delta; });
  await helper.done();
  assert.equal(helperText, expected);

  // (The helper folds in only response.completed: for this reply, cut by the limit and so ended by
  // response.incomplete, its final response is the snapshot it assembled from the deltas.)
  const final = await client.responses.stream(request).finalResponse();
  assert.equal(final.output[0].content[0].text, expected);

  // A reply that stops by itself (llama.cpp's `stop` field) is completed.
  const cut = expected.slice(8, 11);
  const stopped = await client.responses.stream({ ...request, stop: [cut] }).finalResponse();
  assert.equal(stopped.status, "completed");
  assert.equal(stopped.output[0].content[0].text, expected.slice(0, expected.indexOf(cut)));
  assert.equal((await client.responses.create({ ...request, stop: [cut] })).output_text, expected.slice(0, expected.indexOf(cut)));

  // A function tool: tool_choice required forces a call.
  const toolRequest = { model, input: "What is the weather in Paris?", tools, tool_choice: "required",
                        parallel_tool_calls: false, max_output_tokens: 200, temperature: 1.0, seed: 3 };
  const called = await client.responses.create(toolRequest);
  assert.equal(called.status, "completed");
  const calls = called.output.filter((item) => item.type === "function_call");
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, "get_weather");
  assert.ok(calls[0].call_id.startsWith("call_"));
  checkArguments(calls[0].arguments);
  const streamedCall = await client.responses.stream(toolRequest).finalResponse();
  const streamedCalls = streamedCall.output.filter((item) => item.type === "function_call");
  assert.equal(streamedCalls.length, 1);
  assert.equal(streamedCalls[0].arguments, calls[0].arguments);  // same seed, same call

  // The next turn: the call and its output go back as input.
  const followInput = ["What is the weather in Paris?", ...called.output, { type: "function_call_output", call_id: calls[0].call_id,
                                                                          output: "Sunny, 24 degrees" }];
  followInput[0] = { role: "user", content: followInput[0] };
  const follow = await client.responses.create({ model, input: followInput, tools, max_output_tokens: 16, temperature: 0 });
  assert.equal(follow.status === "completed" || follow.status === "incomplete", true);
  assert.ok(follow.usage.input_tokens > called.usage.input_tokens);
  const counted = await client.responses.inputTokens.count({ model, input: followInput, tools });
  assert.equal(counted.input_tokens, follow.usage.input_tokens);
  assert.equal(counted.object, "response.input_tokens");

  // Stored responses do not exist here.
  await assert.rejects(client.responses.create({ ...request, previous_response_id: called.id }),
                       (e) => e.status === 400 && /previous_response_id/.test(e.message));
  await assert.rejects(client.responses.retrieve(called.id), (e) => e.status === 404);
  console.log("openai responses client: ok");
} finally {
  proc.kill("SIGTERM");
}
