// The official OpenAI Node.js client's embeddings.create against a real ggserve serving an encoder:
// encoding_format float, base64 (the raw string, decoded here) and the client's default (it asks for
// base64 and decodes itself) give the same vectors, and they match the llama.cpp golden (cosine >= 0.999).
// Usage: node openai_embeddings.test.mjs <ggserve binary> <synth-bert-f16.gguf> <synth-bert-f16.embeddings.json>
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer as serve } from "./serve.mjs";

const [binary, model, goldenPath] = process.argv.slice(2);
const golden = JSON.parse(readFileSync(goldenPath, "utf8"));

const startServer = () => serve(binary, ["-m", model, "--port", "0", "--embeddings", "--pooling", "mean", "-np", "4",
                              "-t", "2"]);

function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
}

const { proc, url } = await startServer();
try {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused" });
  const input = golden.cases.map((c) => c.prompt);
  const asFloat = await client.embeddings.create({ model: "m", input, encoding_format: "float" });
  assert.equal(asFloat.object, "list");
  assert.equal(asFloat.data.length, input.length);
  const nTokens = golden.cases.reduce((n, c) => n + c.tokens.length, 0);
  assert.equal(asFloat.usage.prompt_tokens, nTokens);
  assert.equal(asFloat.usage.total_tokens, nTokens);

  const asBase64 = await client.embeddings.create({ model: "m", input, encoding_format: "base64" });
  const byDefault = await client.embeddings.create({ model: "m", input });  // the client decodes base64
  let minCos = 1;
  for (let i = 0; i < input.length; i++) {
    const v = asFloat.data[i].embedding;
    assert.equal(asFloat.data[i].index, i);
    assert.equal(typeof asBase64.data[i].embedding, "string");
    const buf = Buffer.from(asBase64.data[i].embedding, "base64");
    const decoded = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4));
    assert.deepEqual(decoded, v);
    assert.deepEqual(Array.from(byDefault.data[i].embedding), v);
    minCos = Math.min(minCos, cosine(v, golden.cases[i].mean));
  }
  assert.ok(minCos >= 0.999, `min cosine ${minCos}`);

  // a bad request surfaces as the client's BadRequestError (status 400)
  await assert.rejects(client.embeddings.create({ model: "m", input: [] }), (e) => e.status === 400);
  console.log(`openai embeddings: ok (min cosine to the golden ${minCos.toFixed(7)})`);
} finally {
  proc.kill("SIGTERM");
}
