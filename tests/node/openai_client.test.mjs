// The official OpenAI Node.js client against a real ggserve: models, chat and completions, plain and
// streamed, and authentication. Usage: node openai_client.test.mjs <ggserve binary> <model.gguf> <golden.json>
// With GGSERVE_URL set (e.g. http://127.0.0.1:8080, a server already running with stories260K.gguf and the
// API key below, as the docker test starts), it talks to that server instead of starting one.
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer as serve } from "./serve.mjs";

const [binary, model, goldenPath] = process.argv.slice(2);
const golden = JSON.parse(readFileSync(goldenPath, "utf8"));
const API_KEY = "sk-test-0123456789";

// Starts the server on an ephemeral port and resolves with its base URL once it reports "ready".
const startServer = () => serve(binary, ["-m", model, "--port", "0", "-np", "2", "-c", "1024", "-t", "1",
                              "--api-key", API_KEY]);

const { proc, url } = process.env.GGSERVE_URL ? { proc: null, url: process.env.GGSERVE_URL } : await startServer();
try {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY });

  // models
  const models = await client.models.list();
  assert.equal(models.data.length, 1);
  const modelId = models.data[0].id;
  // The model file's name, unless the server under test was given an alias (GGSERVE_MODEL_ID).
  assert.equal(modelId, process.env.GGSERVE_MODEL_ID ?? "stories260K.gguf");

  // completions: greedy text is the reference continuation
  const ref = golden.cases[0];
  const completion = await client.completions.create({ model: modelId, prompt: ref.prompt, max_tokens: 24, temperature: 0 });
  assert.equal(completion.object, "text_completion");
  assert.equal(completion.choices[0].finish_reason, "length");
  assert.ok(completion.choices[0].text.length > 0);
  assert.ok(ref.completion_text.startsWith(completion.choices[0].text), `"${completion.choices[0].text}" is not the reference`);
  assert.equal(completion.usage.prompt_tokens, ref.prompt_tokens.length);
  assert.equal(completion.usage.completion_tokens, 24);

  // completions, streamed: the same text in pieces
  let streamed = "";
  let finish = null;
  const cstream = await client.completions.create({ model: modelId, prompt: ref.prompt, max_tokens: 24, temperature: 0, stream: true });
  for await (const chunk of cstream) {
    if (chunk.choices.length) {
      streamed += chunk.choices[0].text;
      finish = chunk.choices[0].finish_reason ?? finish;
    }
  }
  assert.equal(streamed, completion.choices[0].text);
  assert.equal(finish, "length");

  // chat, plain
  const messages = [{ role: "system", content: "You tell stories." }, { role: "user", content: "Tell me about Lily." }];
  const chat = await client.chat.completions.create({ model: modelId, messages, max_tokens: 20, temperature: 0 });
  assert.equal(chat.object, "chat.completion");
  assert.equal(chat.choices[0].message.role, "assistant");
  assert.equal(typeof chat.choices[0].message.content, "string");
  assert.ok(chat.choices[0].message.content.length > 0);
  assert.ok(["stop", "length"].includes(chat.choices[0].finish_reason));
  assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + chat.usage.completion_tokens);

  // chat, streamed with usage: same text, a role chunk first, usage at the end
  let text = "", sawRole = false, usage = null, chunks = 0;
  const stream = await client.chat.completions.create({ model: modelId, messages, max_tokens: 20, temperature: 0,
                                                         stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) {
    ++chunks;
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.role === "assistant") sawRole = true;
      text += c.delta.content ?? "";
    }
  }
  assert.ok(sawRole);
  assert.ok(chunks > 3);
  assert.equal(text, chat.choices[0].message.content);
  assert.ok(usage && usage.completion_tokens === chat.usage.completion_tokens);

  // a wrong key is an authentication error
  const bad = new OpenAI({ baseURL: `${url}/v1`, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(bad.chat.completions.create({ model: modelId, messages, max_tokens: 2 }),
    (e) => e.status === 401);
  // the model list is public, as in llama-server
  assert.ok((await bad.models.list()).data.length === 1);

  // invalid input is a 400 with an OpenAI error body
  await assert.rejects(
    client.chat.completions.create({ model: modelId, messages, max_tokens: -5 }, { maxRetries: 0 }),
    (e) => e.status === 400 && typeof e.message === "string");
  console.log("openai client tests: ok");
} finally {
  if (proc) {
    proc.removeAllListeners("exit");
    proc.kill("SIGTERM");
  }
}
