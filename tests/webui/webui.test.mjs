// Browser tests of the chat UI: Debian's chromium, driven by puppeteer-core, against the real ggserve
// binary with stories260K on 127.0.0.1. Usage (scripts/test_webui.sh runs it):
//   node webui.test.mjs GGSERVE_BINARY MODEL OUTPUT_DIR
// Screenshots of the main states go to OUTPUT_DIR. Every wait is for an event, a selector or a condition,
// each bounded; nothing sleeps.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer from 'puppeteer-core';

const [binArg, modelArg, outDir] = process.argv.slice(2);
if (!binArg || !modelArg || !outDir) {
  console.error('usage: node webui.test.mjs GGSERVE_BINARY MODEL OUTPUT_DIR');
  process.exit(2);
}
// Absolute: the tool servers run in a directory of their own.
const bin = resolve(binArg);
const model = resolve(modelArg);
// A template with tool calls (Hermes style), as tests/integration/test_tools.cpp.
const TOOL_TEMPLATE = resolve(model, '../../templates/Qwen-Qwen2.5-7B-Instruct.jinja');
mkdirSync(outDir, { recursive: true });
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Generous: on a loaded machine the browser, the server and the compilers share few cores.
const WAIT = { timeout: 60000 };

// ---- the server -------------------------------------------------------------------------------

// Starts `ggserve serve` on a free port and resolves once it logs "ready:"; `cwd`: its directory.
// `port`: that one (a restart of a server on its port), else a free one.
function startServer(extra = [], { cwd, port = 0 } = {}) {
  // No -n by default: as in llama-server it caps every request, and the Stop and busy tests ask for
  // 30000 tokens. The page's own replies are kept short by its Max tokens setting (200, set below).
  const args = ['serve', '--port', String(port), '-m', model, '-np', '1', '-c', '32768', '-t', '1', ...extra];
  const proc = spawn(bin, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready in 60 s:\n${log}`)), 60000);
    proc.stderr.on('data', (d) => {
      log += d;
      const bound = /listening on http:\/\/[^:]+:(\d+)/.exec(log)?.[1];
      if (bound && log.includes('ready:')) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${bound}`,
          port: Number(bound),
          // SIGKILL: a crash, at once (SIGTERM waits up to 2 s for requests still running).
          stop: (signal = 'SIGTERM') => new Promise((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done();
            proc.once('exit', done);
            proc.kill(signal);
          }),
        });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}):\n${log}`));
    });
  });
}

// Polls `fn` until it returns a truthy value; fails after `ms`.
async function until(what, fn, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));  // a poll interval, not a synchronization
  }
}

// ---- the runner -------------------------------------------------------------------------------

const results = [];
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push([name, true]);
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push([name, false]);
    console.log(`FAIL ${name}\n     ${String(e?.stack ?? e).split('\n').join('\n     ')}`);
  }
}

async function shot(page, name) {
  await page.screenshot({ path: join(outDir, `${name}.png`) });
}

// The text of the last assistant message, and how often its content changed (a MutationObserver
// installed by watchReply counts the distinct lengths it saw).
const lastReply = (page) =>
  page.$eval('#messages', (m) => [...m.querySelectorAll('.msg-assistant .content')].pop()?.textContent ?? '');

async function watchReply(page) {
  await page.evaluate(() => {
    window.__lengths = new Set();
    window.__observer?.disconnect();
    window.__observer = new MutationObserver(() => {
      const c = [...document.querySelectorAll('.msg-assistant .content')].pop();
      if (c) window.__lengths.add(c.textContent.length);
    });
    window.__observer.observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
  });
}

async function send(page, text) {
  await page.click('#input');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

// An SSE body as the server would stream it, from chunks of `delta`s.
function sse(deltas, timings) {
  const base = { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: 'stories260K.gguf' };
  const events = deltas.map((delta) => ({ ...base, choices: [{ index: 0, delta, finish_reason: null }] }));
  events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], timings });
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
}

// The extra request fields of the settings dialog ('' for none).
async function setExtra(page, text) {
  await page.click('#settings-btn');
  await page.waitForSelector('#settings', WAIT);
  await page.$eval('textarea[name=extra]', (e) => { e.focus(); e.select(); });
  await page.keyboard.press('Backspace');
  if (text) await page.type('textarea[name=extra]', text);
  await page.click('#settings-save');
  await page.waitForSelector('#settings', { hidden: true, ...WAIT });
}

// Deletes the conversation on screen (the later tests count and search the conversations).
async function deleteActive(page) {
  const n = await page.$$eval('#conv-list li', (l) => l.length);
  await page.click('#conv-list li.active button[title="Delete"]');
  await page.click('#conv-list li.active button[title="Click again to delete"]');
  await page.waitForFunction((n) => document.querySelectorAll('#conv-list li').length === n - 1, WAIT, n);
}

// What a page does with resumable streams, across its reloads: the X-Conversation-Id of each chat
// request, the ids it looks up, follows (GET /v1/stream) and stops (DELETE), and the lookups' headers.
function recordStreams(page) {
  const rec = { ids: [], lookups: [], follows: [], deletes: [] };
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (r.method() === 'POST' && u.pathname.endsWith('/v1/chat/completions')) rec.ids.push(r.headers()['x-conversation-id']);
    else if (r.method() === 'POST' && u.pathname.endsWith('/v1/streams/lookup')) {
      rec.lookups.push({ ids: JSON.parse(r.postData()).conversation_ids, headers: r.headers(), path: u.pathname });
    } else if (r.method() === 'GET' && u.pathname.endsWith('/v1/stream')) rec.follows.push({ id: u.searchParams.get('conv_id'), from: u.searchParams.get('from') });
    else if (r.method() === 'DELETE' && u.pathname.endsWith('/v1/stream')) rec.deletes.push(u.searchParams.get('conv_id'));
  });
  return rec;
}

// The stored reply (in the page's localStorage) that streams as `streamId`, or { convId, nodeId } names.
async function storedReply(page, { streamId, convId, nodeId }) {
  return page.evaluate((streamId, convId, nodeId) => {
    for (const c of JSON.parse(localStorage.getItem('ggserve.conversations.v1') ?? '[]')) {
      for (const n of Object.values(c.nodes)) {
        if ((streamId && n.stream === streamId) || (c.id === convId && n.id === nodeId)) return { convId: c.id, nodeId: n.id, ...n };
      }
    }
    return null;
  }, streamId ?? null, convId ?? null, nodeId ?? null);
}

// The reply streaming as `streamId` once the page has saved some of its text.
const savedReply = (page, streamId) =>
  until('the reply to be saved', async () => {
    const r = await storedReply(page, { streamId });
    return r?.content ? r : null;
  });

// Sends `text` and waits until the page shows its reply growing and has saved some of it; `rec`
// (recordStreams) names the reply's stream. Returns the stream's id and the reply as first saved.
async function replyUnderWay(page, rec, text) {
  await watchReply(page);
  await send(page, text);
  await page.waitForFunction(() => window.__lengths.size >= 2, WAIT);
  const id = rec.ids.at(-1);
  return { id, before: await savedReply(page, id) };
}

// The stored assistant reply of the conversation named `name` (its first message).
const storedAssistant = (page, name) =>
  page.evaluate((name) => {
    const c = JSON.parse(localStorage.getItem('ggserve.conversations.v1') ?? '[]').find((x) => x.name === name);
    return c ? Object.values(c.nodes).find((n) => n.role === 'assistant') ?? null : null;
  }, name);

// The content of an event stream's chunks, with its finish reason, last timings and whether [DONE] came.
function parseSse(text) {
  const out = { content: '', finish: null, timings: null, done: false };
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    if (line === 'data: [DONE]') {
      out.done = true;
      continue;
    }
    const e = JSON.parse(line.slice(6));
    out.content += e.choices?.[0]?.delta?.content ?? '';
    out.finish = e.choices?.[0]?.finish_reason ?? out.finish;
    out.timings = e.timings ?? out.timings;
  }
  return out;
}

// The whole stream `id` as the server replays it (GET /v1/stream from byte 0, to its end).
async function replayStream(url, id, headers = {}) {
  const res = await fetch(`${url}/v1/stream?conv_id=${encodeURIComponent(id)}&from=0`, { headers });
  assert.equal(res.status, 200);
  return parseSse(await res.text());
}

async function lookupStream(url, id, headers = {}) {
  const res = await fetch(`${url}/v1/streams/lookup`, {
    method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ conversation_ids: [id] }),
  });
  assert.equal(res.status, 200);
  return (await res.json())[0] ?? null;
}

// A proxy in front of `target` (a network between the page and the server) that passes everything
// through, except that it drops the connection of the first chat completion it carries once `cutAfter`
// bytes of its answer have passed (the server sees its client go away, as the page does).
async function droppingProxy(target, cutAfter) {
  let dropped = false;
  const srv = http.createServer((req, res) => {
    const up = http.request(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
      const drop = !dropped && req.method === 'POST' && req.url.endsWith('/v1/chat/completions');
      if (drop) dropped = true;
      res.writeHead(answer.statusCode, answer.headers);
      res.flushHeaders();
      let passed = 0;
      answer.on('data', (d) => {
        if (drop && passed + d.length > cutAfter) {
          // The page gets the first `cutAfter` bytes (some events, however the server grouped its writes),
          // then the connection breaks.
          res.write(d.subarray(0, Math.max(cutAfter - passed, 1)), () => {
            res.socket?.destroy();
            answer.destroy();
          });
          passed = Infinity;
          return;
        }
        if (passed === Infinity) return;
        passed += d.length;
        res.write(d);
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.socket?.destroy());
    });
    up.on('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    dropped: () => dropped,
    close: () => new Promise((r) => {
      srv.closeAllConnections();
      srv.close(r);
    }),
  };
}

// A fresh browser context on `url` with these settings saved (as the settings dialog saves them). It
// records the bodies the page posts to /v1/chat/completions and to /tools.
async function openWithSettings(url, settings) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 820 });
  // The settings are saved before the app's first script runs, once per tab (later reloads keep what the
  // page saved): loading the app without its API key first would log a 401 that races a reload.
  await page.evaluateOnNewDocument((s) => {
    if (sessionStorage.getItem('test.seeded')) return;
    localStorage.setItem('ggserve.settings.v2', JSON.stringify(s));
    sessionStorage.setItem('test.seeded', '1');
  }, settings);
  const sent = { chats: [], tools: [], errors: [] };
  page.on('request', (r) => {
    if (r.method() !== 'POST') return;
    if (r.url().endsWith('/v1/chat/completions')) sent.chats.push(JSON.parse(r.postData()));
    else if (r.url().endsWith('/tools')) sent.tools.push({ body: JSON.parse(r.postData()), headers: r.headers() });
  });
  page.on('console', (m) => m.type() === 'error' && sent.errors.push(m.text()));
  page.on('pageerror', (e) => sent.errors.push(String(e)));
  await page.goto(url + '/', { waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
  return { ctx, page, sent };
}

// What the page shows of each tool result: [{ status class, tool name, text }].
const toolResults = (page) => page.$$eval('.msg-tool', (list) => list.map((a) => ({
  status: [...a.classList].find((c) => c.startsWith('tool-'))?.slice(5),
  name: a.querySelector('summary code')?.textContent,
  text: a.querySelector('pre')?.textContent,
})));

// stories260K cannot be made to write a given command: the page's first reply to each message (the chat
// request whose last message is the user's) is answered here, calling exec_shell_command with each of
// `mock.commands` (with the longest timeout, so that only the test ends them). The next replies go to
// the server. While `mock.toolAnswers` holds answers, each POST /tools gets the next one instead of the
// server's.
async function replyRunsCommands(page, commands) {
  const mock = { commands, toolAnswers: [] };
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.method() !== 'POST') return req.continue();
    if (req.url().endsWith('/v1/chat/completions') && JSON.parse(req.postData()).messages.at(-1).role === 'user') {
      const calls = mock.commands.map((command, index) => ({ tool_calls: [{
        index, id: `call_sh${index}`, type: 'function',
        function: { name: 'exec_shell_command', arguments: JSON.stringify({ command, timeout: 60 }) },
      }] }));
      return req.respond({ status: 200, contentType: 'text/event-stream', body: sse([{ role: 'assistant', content: '' }, ...calls]) });
    }
    if (req.url().endsWith('/tools') && mock.toolAnswers.length) return req.respond(mock.toolAnswers.shift());
    req.continue();
  });
  return mock;
}

// The page's stored tool results (localStorage), oldest first.
const storedToolNodes = (page) =>
  page.evaluate(() => JSON.parse(localStorage.getItem('ggserve.conversations.v1') ?? '[]')
    .flatMap((c) => Object.values(c.nodes)).filter((n) => n.role === 'tool').sort((a, b) => a.created - b.created));

// ---- the tests --------------------------------------------------------------------------------

const server = await startServer();
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});

try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 820 });
  const consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  await step('the page loads with CSP, gzip and caching headers and no console errors', async () => {
    const res = await page.goto(server.url + '/', { waitUntil: 'load' });
    assert.equal(res.status(), 200);
    const h = res.headers();
    assert.match(h['content-security-policy'], /script-src 'self'/);
    assert.doesNotMatch(h['content-security-policy'], /unsafe-inline/);
    assert.equal(h['content-encoding'], 'gzip');
    assert.equal(h['cache-control'], 'no-cache');
    assert.ok(h['etag']);
    await page.waitForFunction(() => document.querySelector('#model-info')?.textContent.includes('stories260K'), WAIT);
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
    const info = await page.$eval('#model-info', (e) => e.textContent);
    assert.match(info, /context 32768/);
    assert.deepEqual(consoleErrors, []);
    await shot(page, 'desktop-light-empty');
    // Replies of at most 200 tokens unless a request asks for more (the Stop test does), through the
    // page's Max tokens setting (kept in localStorage).
    await page.evaluate(() => localStorage.setItem('ggserve.settings.v2', JSON.stringify({ max_tokens: '200' })));
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
  });

  let firstReply = '';
  await step('a message gets its streamed reply and its timings', async () => {
    await send(page, 'Once upon a time');
    await page.waitForSelector('.msg-assistant .timings', WAIT);  // the last chunk carries the timings
    await page.waitForSelector('#send', WAIT);
    firstReply = await lastReply(page);
    assert.ok(firstReply.length > 20, `reply: ${firstReply}`);
    const user = await page.$eval('.msg-user .content', (e) => e.textContent);
    assert.equal(user, 'Once upon a time');
    const timings = await page.$eval('.msg-assistant .timings', (e) => e.textContent);
    assert.match(timings, /\d+ tokens · [\d.]+ t\/s/);
    assert.equal(await page.$eval('#conv-list li.active .conv-name', (e) => e.textContent), 'Once upon a time');
    await shot(page, 'desktop-light-reply');
  });

  await step('the conversation survives a reload', async () => {
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('.msg-assistant .content', WAIT);
    assert.equal(await lastReply(page), firstReply);
    assert.equal(await page.$eval('.msg-user .content', (e) => e.textContent), 'Once upon a time');
  });

  // A 200-token reply can arrive within a frame or two on a fast machine (the page renders at most once a
  // frame), so the reply is seen growing here, on a stream far longer than the test.
  await step('a long reply renders as it streams; Stop ends it mid-reply and the server frees the slot', async () => {
    // A long reply, with no stop at end-of-text, asked for through the settings' extra fields: 30000
    // tokens take the server far longer than the test needs to press Stop, on any machine.
    await setExtra(page, '{"max_tokens": 30000, "ignore_eos": true}');
    const rec = recordStreams(page);
    try {
      await page.click('#new-chat');
      await watchReply(page);
      await send(page, 'Tell me a long story');
      await page.waitForSelector('#stop', WAIT);
      await page.waitForFunction(() => window.__lengths.size >= 5, WAIT);  // the reply grows on the page
      await page.click('#stop');
      await page.waitForSelector('#send', WAIT);
      await page.waitForFunction(() => [...document.querySelectorAll('.msg-assistant .note')].pop()?.textContent === 'stopped', WAIT);
      await until('the slot to be idle', async () => !(await (await fetch(server.url + '/slots')).json())[0].is_processing);
      const slot = (await (await fetch(server.url + '/slots')).json())[0];
      assert.ok(slot.n_past > 0 && slot.n_past < 29000, `the reply was cut short (${slot.n_past} tokens in the slot)`);
      // The request was resumable, so closing its connection did not stop it: Stop's DELETE did.
      const id = rec.ids.at(-1);
      assert.match(id, /^[\x21-\x7e]{1,256}$/);
      assert.deepEqual(rec.deletes, [id]);
      assert.equal(await lookupStream(server.url, id), null, 'DELETE forgot the stream');
      assert.equal((await storedReply(page, { streamId: id })), null, 'the stopped reply is no longer marked in progress');
      const stoppedAt = await lastReply(page);
      assert.ok(stoppedAt.length > 0);
      // The stream is over: the server answers at once and the stopped reply does not grow any more.
      assert.equal((await fetch(server.url + '/health')).status, 200);
      assert.equal(await lastReply(page), stoppedAt);
      await shot(page, 'desktop-light-stopped');
    } finally {
      await setExtra(page, '');
    }
  });

  // First the page's side is unfinished: it reads the reply (600 tokens, about 150 KB of events) through a
  // throttled network, so it is surely still reading it when it goes, while the server has generated it
  // or is about to. Then the server's: the reply is queued when the page reloads. Either way the reply
  // must come out whole and as generated. The next test follows a stream live from the middle.
  await step('a reply in progress survives a reload (the page\'s or the server\'s side unfinished): it goes on from the server\'s stream and ends as generated', async () => {
    await setExtra(page, '{"max_tokens": 600, "ignore_eos": true}');
    const rec = recordStreams(page);
    try {
      await page.click('#new-chat');
      await page.emulateNetworkConditions({ download: 20000, upload: -1, latency: 0 });
      const { id, before } = await replyUnderWay(page, rec, 'A story to resume');
      // The page goes (as a closed tab) before the network is let loose, which would hand it the rest of the
      // reply at once, then comes back.
      await page.goto('about:blank');
      await page.emulateNetworkConditions(null);
      const lookedUp = page.waitForResponse((r) => r.url().endsWith('/v1/streams/lookup'), WAIT);
      await page.goto(server.url + '/', { waitUntil: 'load' });
      const found = await (await lookedUp).json();
      assert.deepEqual(found.map((f) => f.conversation_id), [id]);
      await page.waitForSelector('.msg-assistant .timings', WAIT);
      await page.waitForSelector('#send', WAIT);
      assert.deepEqual(rec.lookups.map((l) => l.ids), [[id]]);
      assert.deepEqual(rec.follows, [{ id, from: '0' }]);
      const after = await storedReply(page, before);
      const server_ = await replayStream(server.url, id);
      assert.ok(server_.done);
      assert.equal(after.content, server_.content, 'the reply is the stream\'s, nothing doubled or lost');
      assert.ok(after.content.startsWith(before.content) && after.content.length > before.content.length);
      assert.equal(after.finish, 'length');
      assert.equal(after.stream, undefined, 'the reply is no longer in progress');
      assert.equal(after.timings.predicted_n, 600);
      assert.deepEqual(after.timings, server_.timings);
      assert.match(await page.$eval('.msg-assistant .timings', (e) => e.textContent), /^600 tokens/);
      assert.equal(await page.$eval('#status', (e) => e.textContent), 'Ready');
      await deleteActive(page);

      // A reply the server has not finished (not even started: queued behind another client's request on
      // the only slot) when the page reloads: the page follows it live, to the end, as generated.
      const hold = new AbortController();
      const other = await fetch(server.url + '/v1/chat/completions', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, signal: hold.signal,
        body: JSON.stringify({ messages: [{ role: 'user', content: 'Hold on' }], max_tokens: 30000, ignore_eos: true, stream: true }),
      });
      await other.body.getReader().read();  // its stream has started: the slot is taken
      let id2;
      try {
        await page.click('#new-chat');
        await send(page, 'A story to wait for');
        await until('the page\'s request to reach the server', async () => rec.ids.length === 2 && await lookupStream(server.url, rec.ids[1]));
        id2 = rec.ids[1];
        await page.reload({ waitUntil: 'load' });
        await until('the page to follow the queued reply', () => rec.follows.length === 2);
        assert.equal((await lookupStream(server.url, id2)).is_done, false);
      } finally {
        hold.abort();
      }
      await page.waitForSelector('.msg-assistant .timings', WAIT);
      await page.waitForSelector('#send', WAIT);
      const waited = await storedAssistant(page, 'A story to wait for');
      const generated = await replayStream(server.url, id2);
      assert.equal(waited.content, generated.content);
      assert.deepEqual(waited.timings, generated.timings);
      assert.equal(waited.stream, undefined);
      await deleteActive(page);
    } finally {
      await page.emulateNetworkConditions(null);
      await setExtra(page, '');
    }
  });

  await step('a reply followed after a reload streams live, and Stop stops the server\'s generation', async () => {
    await setExtra(page, '{"max_tokens": 30000, "ignore_eos": true}');
    const rec = recordStreams(page);
    try {
      await page.click('#new-chat');
      const { id, before } = await replyUnderWay(page, rec, 'A story to stop after a reload');
      await page.reload({ waitUntil: 'load' });
      await page.waitForSelector('#stop', WAIT);
      await watchReply(page);
      await page.waitForFunction(() => window.__lengths.size >= 3, WAIT);  // it grows on the page: live
      assert.equal((await lookupStream(server.url, id))?.is_done, false);
      // A reader of its own, to the stream's end, to compare with what the page shows.
      const own = fetch(`${server.url}/v1/stream?conv_id=${id}&from=0`).then((r) => r.text());
      await page.click('#stop');
      await page.waitForSelector('#send', WAIT);
      await page.waitForFunction(() => [...document.querySelectorAll('.msg-assistant .note')].pop()?.textContent === 'stopped', WAIT);
      assert.deepEqual(rec.deletes, [id]);
      await until('the slot to be idle', async () => !(await (await fetch(server.url + '/slots')).json())[0].is_processing);
      const slot = (await (await fetch(server.url + '/slots')).json())[0];
      assert.ok(slot.n_past > 0 && slot.n_past < 29000, `the reply was cut short (${slot.n_past} tokens in the slot)`);
      assert.equal(await lookupStream(server.url, id), null);
      const all = parseSse(await own);
      assert.equal(all.done, false, 'DELETE ended the stream without [DONE]');
      const after = await storedReply(page, before);
      assert.equal(after.finish, 'stopped');
      assert.equal(after.stream, undefined);
      assert.ok(after.content.length > before.content.length && after.content.startsWith(before.content));
      assert.ok(all.content.startsWith(after.content), 'what the page shows is the stream, nothing doubled');
      await deleteActive(page);
    } finally {
      await setExtra(page, '');
    }
  });

  // The network drops mid-reply (the page stays): the page follows the reply's stream again by itself, and
  // the reply ends as the server generated it.
  await step('a reply whose connection drops goes on by itself from the server\'s stream', async () => {
    const proxy = await droppingProxy(server.url, 4000);
    let ctx;
    try {
      let p, sent;
      ({ ctx, page: p, sent } = await openWithSettings(proxy.url, { extra: '{"max_tokens": 300, "ignore_eos": true}' }));
      const rec = recordStreams(p);
      await send(p, 'A story over a bad network');
      await p.waitForFunction(() => /Connection lost/.test(document.querySelector('#status')?.textContent ?? ''), WAIT);
      await p.waitForSelector('.msg-assistant .timings', WAIT);
      await p.waitForSelector('#send', WAIT);
      assert.ok(proxy.dropped());
      const id = rec.ids.at(-1);
      assert.deepEqual(rec.follows, [{ id, from: '0' }]);
      const stored = await storedAssistant(p, 'A story over a bad network');
      const generated = await replayStream(server.url, id);
      assert.ok(generated.done);
      assert.equal(stored.content, generated.content, 'nothing lost or doubled across the drop');
      assert.equal(stored.timings.predicted_n, 300);
      assert.equal(stored.stream, undefined);
      assert.equal(stored.error, undefined);
      assert.equal(await p.$eval('#status', (e) => e.textContent), 'Ready');
      assert.equal(sent.chats.length, 1, 'one request: the reply was followed, not asked again');
    } finally {
      await ctx?.close();
      await proxy.close();
    }
  });

  await step('settings reach the request body and are kept per browser', async () => {
    await page.click('#settings-btn');
    await page.waitForSelector('#settings', WAIT);
    // Placeholders show the server's defaults from /props.
    assert.match(await page.$eval('input[name=temperature]', (e) => e.placeholder), /^\d/);
    await page.type('textarea[name=system]', 'You are a storyteller.');
    await page.type('input[name=temperature]', '0.25');
    await page.type('input[name=top_k]', '7');
    await page.type('input[name=min_p]', '0.1');
    await page.type('input[name=dry_multiplier]', '0.5');
    await page.type('input[name=xtc_probability]', '0.2');
    await page.$eval('input[name=max_tokens]', (e) => { e.focus(); e.select(); });  // replaces the 200
    await page.keyboard.press('Backspace');
    await page.type('input[name=max_tokens]', '12');
    await page.type('input[name=seed]', '42');
    await shot(page, 'desktop-light-settings');
    await page.click('#settings-save');
    await page.waitForSelector('#settings', { hidden: true, ...WAIT });

    await page.reload({ waitUntil: 'load' });  // settings come back from localStorage
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
    const sent = new Promise((resolve) => {
      const h = (req) => {
        if (req.url().endsWith('/v1/chat/completions') && req.method() === 'POST') {
          page.off('request', h);
          resolve(JSON.parse(req.postData()));
        }
      };
      page.on('request', h);
    });
    await page.click('#new-chat');
    await send(page, 'Hello');
    const body = await sent;
    await page.waitForSelector('#send', WAIT);
    assert.equal(body.stream, true);
    assert.deepEqual(body.messages, [{ role: 'system', content: 'You are a storyteller.' }, { role: 'user', content: 'Hello' }]);
    assert.equal(body.temperature, 0.25);
    assert.equal(body.top_k, 7);
    assert.equal(body.min_p, 0.1);
    assert.equal(body.dry_multiplier, 0.5);
    assert.equal(body.xtc_probability, 0.2);
    assert.equal(body.max_tokens, 12);
    assert.equal(body.seed, 42);
    assert.equal(body.top_p, undefined, 'an empty field is the server default and is not sent');
    const t = await page.$eval('.msg-assistant .timings', (e) => e.textContent);
    const n = Number(/^(\d+) tokens/.exec(t)?.[1]);
    assert.ok(n >= 1 && n <= 12, t);
  });

  await step('regenerate adds a branch; editing a user message branches too', async () => {
    await page.click('.regen-btn');
    await page.waitForSelector('.branches', WAIT);
    await page.waitForSelector('#send', WAIT);
    assert.equal(await page.$eval('.msg-assistant .branches span', (e) => e.textContent), '2/2');
    await page.click('.edit-btn');
    await page.waitForSelector('.edit textarea', WAIT);
    await page.$eval('.edit textarea', (e) => (e.value = ''));
    await page.type('.edit textarea', 'Hello again');
    await page.click('.edit .primary');
    await page.waitForSelector('#send', WAIT);
    assert.equal(await page.$eval('.msg-user .content', (e) => e.textContent), 'Hello again');
    assert.equal(await page.$eval('.msg-user .branches span', (e) => e.textContent), '2/2');
    await page.click('.msg-user .branches button[aria-label="Previous version"]');
    await page.waitForFunction(() => document.querySelector('.msg-user .content')?.textContent === 'Hello', WAIT);
    assert.equal(await page.$eval('.msg-assistant .branches span', (e) => e.textContent), '2/2');
  });

  await step('markdown, code highlighting, reasoning, tool calls; HTML in a reply is text', async () => {
    const reply = [
      '# A title\n\nSome **bold** text and `inline code`.\n\n',
      '```python\ndef add(a, b):\n    return a + b  # sum\n```\n\n',
      '- one\n- two\n\n',
      '<script>window.__xss = 1</script> and <img src=x onerror="window.__xss = 2"> stay text.',
    ];
    const body = sse([
      { role: 'assistant', content: '' },
      { reasoning_content: 'The user wants a demo. ' },
      { reasoning_content: 'I will show markdown.' },
      ...reply.map((content) => ({ content })),
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] },
    ], { prompt_n: 5, predicted_n: 42, predicted_per_second: 123.4, prompt_per_second: 50 });
    await page.setRequestInterception(true);
    const onRequest = (req) => {
      if (req.url().endsWith('/v1/chat/completions')) {
        req.respond({ status: 200, contentType: 'text/event-stream', body });
      } else req.continue();
    };
    page.on('request', onRequest);
    try {
      await page.click('#new-chat');
      await send(page, 'Show me markdown');
      await page.waitForSelector('.tool-call', WAIT);
      await page.waitForSelector('#send', WAIT);
    } finally {
      page.off('request', onRequest);
      await page.setRequestInterception(false);
    }
    const md = await page.$eval('.msg-assistant .markdown', (m) => ({
      h1: m.querySelector('h1')?.textContent,
      strong: m.querySelector('strong')?.textContent,
      inline: m.querySelector(':not(pre) > code')?.textContent,
      lang: m.querySelector('.code-block .code-head span')?.textContent,
      code: m.querySelector('.code-block pre code')?.textContent,
      keywords: [...m.querySelectorAll('.code-block .hljs-keyword')].map((k) => k.textContent),
      copy: !!m.querySelector('.code-block .copy-code'),
      items: m.querySelectorAll('li').length,
      scripts: m.querySelectorAll('script').length,
      imgs: m.querySelectorAll('img').length,
      onerror: m.querySelectorAll('[onerror]').length,
      text: m.textContent,
    }));
    assert.equal(md.h1, 'A title');
    assert.equal(md.strong, 'bold');
    assert.equal(md.inline, 'inline code');
    assert.equal(md.lang, 'python');
    assert.equal(md.code, 'def add(a, b):\n    return a + b  # sum');
    assert.ok(md.keywords.includes('def') && md.keywords.includes('return'), JSON.stringify(md.keywords));
    assert.ok(md.copy);
    assert.equal(md.items, 2);
    assert.equal(md.scripts, 0);
    assert.equal(md.imgs, 0);
    assert.equal(md.onerror, 0);
    assert.ok(md.text.includes('<script>window.__xss = 1</script>'), md.text);
    assert.ok(md.text.includes('<img src=x onerror="window.__xss = 2">'), md.text);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    const reasoning = await page.$eval('.msg-assistant details.reasoning', (d) => ({ open: d.open, text: d.textContent }));
    assert.equal(reasoning.open, false);
    assert.match(reasoning.text, /Reasoning.*The user wants a demo\. I will show markdown\./s);
    const tool = await page.$eval('.tool-call', (e) => e.textContent);
    assert.match(tool, /get_weather/);
    assert.match(tool, /\{"city": "Paris"\}/);
    assert.match(await page.$eval('.msg-assistant .timings', (e) => e.textContent), /42 tokens · 123\.4 t\/s/);
    await shot(page, 'desktop-light-markdown');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await shot(page, 'desktop-dark-markdown');
  });

  await step('conversations: search, rename, delete, export, import', async () => {
    const clearSearch = async () => {
      await page.click('#search', { clickCount: 3 });
      await page.keyboard.press('Backspace');
      await page.waitForFunction(() => document.querySelector('#search').value === '', WAIT);
    };
    const names = () => page.$$eval('#conv-list .conv-name', (b) => b.map((x) => x.textContent));
    assert.ok((await names()).length >= 4);
    await page.type('#search', 'markdown');
    await page.waitForFunction(() => document.querySelectorAll('#conv-list .conv-name').length === 1, WAIT);
    assert.deepEqual(await names(), ['Show me markdown']);
    await page.click('#conv-list li button[title="Rename"]');
    await page.waitForSelector('#conv-list input.rename', WAIT);
    await page.$eval('#conv-list input.rename', (e) => e.select());
    await page.keyboard.type('Markdown demo');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#conv-list .conv-name')?.textContent === 'Markdown demo', WAIT);
    const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('ggserve.conversations.v1')));
    assert.ok(stored.some((c) => c.name === 'Markdown demo'));
    await clearSearch();
    await page.type('#search', 'Tell me');
    await page.waitForFunction(() => document.querySelectorAll('#conv-list .conv-name').length === 1, WAIT);
    await page.click('#conv-list li button[title="Delete"]');
    await page.click('#conv-list li button[title="Click again to delete"]');
    await page.waitForFunction(() => document.querySelector('#conv-list li.none'), WAIT);
    const after = await page.evaluate(() => JSON.parse(localStorage.getItem('ggserve.conversations.v1')));
    assert.ok(!after.some((c) => c.name === 'Tell me a long story'));
    await clearSearch();

    // Export downloads every conversation as JSON; importing a file adds its conversations.
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: outDir, eventsEnabled: true });
    const downloaded = new Promise((resolve) => cdp.on('Browser.downloadProgress', (e) => e.state === 'completed' && resolve()));
    const [download] = await Promise.all([
      new Promise((resolve) => cdp.once('Browser.downloadWillBegin', resolve)),
      page.click('.sidebar-foot button:first-child'),
    ]);
    await downloaded;
    const exported = JSON.parse(readFileSync(join(outDir, download.suggestedFilename), 'utf8'));
    assert.equal(exported.format, 'ggserve-conversations');
    assert.deepEqual(exported.conversations.map((c) => c.name).sort(), ['Hello', 'Markdown demo', 'Once upon a time']);
    const copy = exported.conversations.find((c) => c.name === 'Hello');
    const importFile = join(outDir, 'import.json');
    writeFileSync(importFile, JSON.stringify({ ...exported, conversations: [{ ...copy, id: 'imported-1', name: 'Imported chat' }] }));
    const [chooser] = await Promise.all([page.waitForFileChooser(WAIT), page.click('.sidebar-foot button:nth-child(2)')]);
    await chooser.accept([importFile]);
    await page.waitForFunction(() => [...document.querySelectorAll('#conv-list .conv-name')].some((b) => b.textContent === 'Imported chat'), WAIT);
    assert.match(await page.$eval('#status', (e) => e.textContent), /Imported 1 conversation/);
    await page.evaluate(() => [...document.querySelectorAll('#conv-list .conv-name')].find((b) => b.textContent === 'Imported chat').click());
    await page.waitForFunction(() => document.querySelector('.msg-user .content')?.textContent === 'Hello', WAIT);
  });

  await step('a loading server (503) is reported until it is ready', async () => {
    const p = await browser.newPage();
    let healthCalls = 0;
    await p.setRequestInterception(true);
    p.on('request', (req) => {
      if (req.url().endsWith('/health') && healthCalls++ === 0) {
        req.respond({ status: 503, contentType: 'application/json', body: '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}' });
      } else req.continue();
    });
    await p.goto(server.url + '/', { waitUntil: 'load' });
    await p.waitForFunction(() => /still loading the model/.test(document.querySelector('#status')?.textContent), WAIT);
    await shot(p, 'desktop-light-loading');
    await p.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
    await p.close();
  });

  await step('phone-sized layout in both themes', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('.msg-assistant', WAIT);
    const sidebarX = await page.$eval('.sidebar', (s) => s.getBoundingClientRect().right);
    assert.ok(sidebarX <= 0, 'the sidebar is off screen on a phone');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling (${width}px)`);
    await shot(page, 'phone-light-chat');
    await page.click('.menu-btn');
    await page.waitForFunction(() => document.querySelector('.sidebar').getBoundingClientRect().left >= 0, WAIT);
    await shot(page, 'phone-light-sidebar');
    await page.click('.backdrop', { offset: { x: 370, y: 400 } });  // a tap beside the sidebar closes it
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.waitForFunction(() => document.querySelector('.sidebar').getBoundingClientRect().right <= 0, WAIT);
    await shot(page, 'phone-dark-chat');
    await page.setViewport({ width: 1280, height: 820 });
  });

  await step('a busy server (every slot in use) is reported, and the reply comes once a slot frees', async () => {
    // Another client holds the only slot with a long generation.
    const hold = new AbortController();
    const other = await fetch(server.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hold on' }], max_tokens: 30000, ignore_eos: true, stream: true }),
      signal: hold.signal,
    });
    const reader = other.body.getReader();
    await reader.read();  // its stream has started: the slot is taken
    await page.click('#new-chat');
    await send(page, 'Anyone there?');
    await page.waitForFunction(() => /Server busy/.test(document.querySelector('#status').textContent), WAIT);
    await shot(page, 'desktop-dark-busy');
    hold.abort();
    await page.waitForSelector('.msg-assistant .timings', WAIT);
    await page.waitForFunction(() => document.querySelector('#status').textContent === 'Ready', WAIT);
  });

  await step('a server without tools: no tool UI, and requests carry no tools field', async () => {
    assert.equal(await page.$('#tools-info'), null);
    await page.click('#settings-btn');
    await page.waitForSelector('#settings', WAIT);
    assert.equal(await page.$('#tools-settings'), null);
    await page.click('#settings button[type=button]');  // Cancel
    await page.waitForSelector('#settings', { hidden: true, ...WAIT });
    const sent = new Promise((done) => {
      const h = (req) => {
        if (req.url().endsWith('/v1/chat/completions')) {
          page.off('request', h);
          done(JSON.parse(req.postData()));
        }
      };
      page.on('request', h);
    });
    await page.click('#new-chat');
    await send(page, 'No tools here');
    const body = await sent;
    await page.waitForSelector('#send', WAIT);
    assert.equal(body.tools, undefined);
    assert.equal(body.tool_choice, undefined);
    assert.equal(await page.$('.msg-tool'), null);
  });

  await step('the page ran with no console errors', async () => {
    assert.deepEqual(consoleErrors, []);
  });

  await step('the CSP blocks inline scripts', async () => {
    const p = await browser.newPage();
    const violations = [];
    p.on('console', (m) => m.type() === 'error' && violations.push(m.text()));
    await p.goto(server.url + '/', { waitUntil: 'load' });
    await p.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.head.appendChild(s);
    });
    await until('a CSP report', () => violations.some((v) => /Content Security Policy/i.test(v)));
    assert.equal(await p.evaluate(() => window.__inline), undefined);
    await p.close();
  });

  await step('a server with --api-key: the page asks for the key, then works; unreachable is reported', async () => {
    const keyed = await startServer(['--api-key', 'test-key-123', '-n', '200']);  // a fresh page: no settings
    const ctx = await browser.createBrowserContext();
    try {
      const p = await ctx.newPage();
      await p.setViewport({ width: 1280, height: 820 });
      await p.goto(keyed.url + '/', { waitUntil: 'load' });
      await p.waitForSelector('#api-key-dialog', WAIT);
      await p.waitForFunction(() => /API key/.test(document.querySelector('#status').textContent), WAIT);
      await shot(p, 'desktop-light-api-key');
      await p.type('#api-key-input', 'test-key-123');
      await p.keyboard.press('Enter');
      await p.waitForSelector('#api-key-dialog', { hidden: true, ...WAIT });
      await p.waitForFunction(() => document.querySelector('#model-info')?.textContent.includes('stories260K'), WAIT);
      await send(p, 'Hi');
      await p.waitForSelector('.msg-assistant .timings', WAIT);
      await keyed.stop();
      await send(p, 'Are you there?');
      await p.waitForFunction(() => /cannot be reached/.test(document.querySelector('#status').textContent), WAIT);
      await p.waitForSelector('.msg-error', WAIT);
      await shot(p, 'desktop-light-unreachable');
    } finally {
      await ctx.close();
      await keyed.stop();
    }
  });

  await step('--ui-config gives the page its defaults; what the user changes wins and is all that is saved', async () => {
    const ui = { systemMessage: 'Answer like a pirate.', temperature: 0.25, theme: 'dark', max_tokens: 8, top_k: 'x' };
    const configured = await startServer(['--ui-config', JSON.stringify(ui)]);
    const ctx = await browser.createBrowserContext();
    try {
      const p = await ctx.newPage();
      const bodies = [];
      p.on('request', (r) => { if (r.url().endsWith('/v1/chat/completions')) bodies.push(JSON.parse(r.postData())); });
      await p.goto(configured.url + '/', { waitUntil: 'load' });
      await p.waitForFunction(() => document.documentElement.dataset.theme === 'dark', WAIT);
      await p.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
      await send(p, 'Hello');
      await p.waitForSelector('.msg-assistant .timings', WAIT);
      await p.waitForSelector('#send', WAIT);
      assert.deepEqual(bodies[0].messages[0], { role: 'system', content: 'Answer like a pirate.' });
      assert.equal(bodies[0].temperature, 0.25);
      assert.equal(bodies[0].max_tokens, 8);
      assert.equal(bodies[0].top_k, undefined);  // not a number: ignored
      // The settings panel shows the configured values; the user changes the temperature.
      await p.click('#settings-btn');
      await p.waitForSelector('#settings', WAIT);
      assert.equal(await p.$eval('textarea[name=system]', (e) => e.value), 'Answer like a pirate.');
      await p.$eval('input[name=temperature]', (e) => { e.focus(); e.select(); });
      await p.keyboard.type('0.5');
      await p.click('#settings-save');
      await p.waitForSelector('#settings', { hidden: true, ...WAIT });
      const saved = await p.evaluate(() => JSON.parse(localStorage.getItem('ggserve.settings.v2')));
      assert.deepEqual(saved, { temperature: '0.5' });
      await p.reload({ waitUntil: 'load' });
      await p.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
      await send(p, 'Again');
      await p.waitForFunction((n) => document.querySelectorAll('.msg-assistant .timings').length >= n, WAIT, 2);
      const last = bodies[bodies.length - 1];
      assert.equal(last.temperature, 0.5);
      assert.equal(last.messages[0].content, 'Answer like a pirate.');
      await shot(p, 'desktop-dark-ui-config');
    } finally {
      await ctx.close();
      await configured.stop();
    }
  });

  await step('under --api-prefix the page loads at PREFIX/ (PREFIX redirects there) and chats', async () => {
    const prefixed = await startServer(['--api-prefix', '/llm/v2', '-n', '200']);
    const ctx = await browser.createBrowserContext();
    try {
      const p = await ctx.newPage();
      const errors = [];
      p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await p.goto(prefixed.url + '/llm/v2', { waitUntil: 'load' });
      assert.equal(new URL(p.url()).pathname, '/llm/v2/');
      await p.waitForFunction(() => document.querySelector('#model-info')?.textContent.includes('stories260K'), WAIT);
      await send(p, 'Once upon a time');
      await p.waitForSelector('.msg-assistant .timings', WAIT);
      assert.ok((await lastReply(p)).length > 0);
      assert.deepEqual(errors, []);
      // Nothing is served outside the prefix, the page included.
      assert.equal((await fetch(prefixed.url + '/')).status, 404);
    } finally {
      await ctx.close();
      await prefixed.stop();
    }
  });

  await step('with --api-key under --api-prefix a reply resumes after a reload; after a server restart it is interrupted, as with a server without resumable streams', async () => {
    const args = ['--api-key', 'resume-key', '--api-prefix', '/llm'];
    let srv = await startServer(args);
    let ctx;
    try {
      let page;
      ({ ctx, page } = await openWithSettings(srv.url + '/llm', { api_key: 'resume-key', extra: '{"max_tokens": 30000, "ignore_eos": true}' }));
      const rec = recordStreams(page);
      const { id, before } = await replyUnderWay(page, rec, 'A story across restarts');
      await page.reload({ waitUntil: 'load' });
      await page.waitForSelector('#stop', WAIT);
      await watchReply(page);
      await page.waitForFunction(() => window.__lengths.size >= 3, WAIT);  // followed live
      assert.equal(rec.lookups.length, 1);
      assert.equal(rec.lookups[0].path, '/llm/v1/streams/lookup');
      assert.equal(rec.lookups[0].headers.authorization, 'Bearer resume-key');
      assert.deepEqual(rec.follows, [{ id, from: '0' }]);

      // The tab is closed mid-reply and the server crashes and restarts (on its port: the page's origin, so
      // its storage, stays): the new server does not know the stream.
      await page.close();
      await srv.stop('SIGKILL');
      srv = await startServer(args, { port: srv.port });
      page = await ctx.newPage();
      const rec2 = recordStreams(page);
      await page.goto(srv.url + '/llm/', { waitUntil: 'load' });
      await page.waitForSelector('.msg-assistant .note.interrupted', WAIT);
      assert.match(await page.$eval('.note.interrupted', (e) => e.textContent), /interrupted: the server no longer has this reply/);
      assert.deepEqual(rec2.lookups.map((l) => l.ids), [[id]]);
      assert.deepEqual(rec2.follows, []);
      const left = await storedReply(page, before);
      assert.equal(left.finish, 'interrupted');
      assert.equal(left.stream, undefined);
      assert.ok(left.content.startsWith(before.content) && left.content.length > 0, `what arrived stays: ${JSON.stringify(before.content)} then ${JSON.stringify(left.content)}`);
      assert.equal(await page.$eval('.msg-assistant .regen-btn', (e) => e.disabled), false, 'it can be regenerated');
      assert.ok(await page.$('#send'));
      await page.setViewport({ width: 1280, height: 820 });
      await page.$eval('#messages', (m) => { m.scrollTop = m.scrollHeight; });
      await shot(page, 'desktop-light-interrupted');

      // A server without resumable streams (404 on the lookup) leaves such a reply interrupted too, after a
      // single lookup: the same reply, marked in progress again (from a page of the origin that is not the
      // app, which would save its own copy when it goes), and the lookup answered 404.
      await page.close();
      page = await ctx.newPage();
      const rec3 = recordStreams(page);
      await page.goto(srv.url + '/llm/health', { waitUntil: 'load' });
      await page.evaluate((convId, nodeId) => {
        const convs = JSON.parse(localStorage.getItem('ggserve.conversations.v1'));
        const n = convs.find((c) => c.id === convId).nodes[nodeId];
        n.stream = 'webui-unknown-stream';
        delete n.finish;
        delete n.interrupted;
        localStorage.setItem('ggserve.conversations.v1', JSON.stringify(convs));
      }, before.convId, before.nodeId);
      await page.setRequestInterception(true);
      page.on('request', (req) => {
        if (req.url().endsWith('/v1/streams/lookup')) req.respond({ status: 404, contentType: 'text/plain', body: 'Not Found' });
        else req.continue();
      });
      await page.goto(srv.url + '/llm/', { waitUntil: 'load' });
      await page.waitForSelector('.msg-assistant .note.interrupted', WAIT);
      assert.match(await page.$eval('.note.interrupted', (e) => e.textContent), /interrupted: this server cannot resume a reply/);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
      assert.deepEqual(rec3.lookups.map((l) => l.ids), [['webui-unknown-stream']]);
      assert.deepEqual(rec3.follows, []);
      assert.equal((await storedReply(page, before)).stream, undefined);
    } finally {
      await ctx?.close();
      await srv.stop();
    }
  });

  // stories260K never calls a tool by itself: tool_choice "required" (in the extra request fields) makes
  // the grammar force one call per reply, at every turn, so the loop runs until the turn limit.
  await step('with --tools get_info the page runs the calls through POST /tools, shows them and stops at max turns, also after a reload', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ggserve-webui-tools-'));
    const srv = await startServer(['--tools', 'get_info', '--chat-template-file', TOOL_TEMPLATE, '--api-key', 'tool-key'], { cwd: dir });
    let ctx;
    try {
      const auth = { Authorization: 'Bearer tool-key' };
      // A bias for "}" (token 128) closes get_info's empty arguments at once.
      const extra = { tool_choice: 'required', parallel_tool_calls: false, logit_bias: [[128, 100]], max_tokens: 400 };
      let page, sent;
      ({ ctx, page, sent } = await openWithSettings(srv.url, { api_key: 'tool-key', extra: JSON.stringify(extra) }));
      await page.waitForFunction(() => / · 1 tool$/.test(document.querySelector('#tools-info')?.textContent ?? ''), WAIT);
      // Tools are on by default; the max turns, through the settings dialog.
      await page.click('#settings-btn');
      await page.waitForSelector('#tools-settings', WAIT);
      assert.equal(await page.$eval('input[name=use_tools]', (e) => e.checked), true);
      assert.match(await page.$eval('#tools-settings', (e) => e.textContent), /get_info/);
      await page.$eval('input[name=max_turns]', (e) => { e.focus(); e.select(); });
      await page.keyboard.type('2');
      await shot(page, 'desktop-light-tools-settings');
      await page.click('#settings-save');
      await page.waitForSelector('#settings', { hidden: true, ...WAIT });

      await send(page, 'Where do you run?');
      await page.waitForFunction(() => /turn limit \(2\)/.test(document.querySelector('#status')?.textContent), WAIT);
      await page.waitForSelector('#send', WAIT);
      // Two replies (the limit), each one's call run through POST /tools with the API key.
      assert.equal(sent.chats.length, 2);
      assert.equal(sent.tools.length, 2);
      for (const t of sent.tools) {
        assert.deepEqual(t.body, { tool: 'get_info', params: {} });
        assert.equal(t.headers.authorization, 'Bearer tool-key');
      }
      const defs = await (await fetch(srv.url + '/tools', { headers: auth })).json();
      assert.deepEqual(sent.chats[0].tools, defs.map((t) => t.definition));
      assert.equal(sent.chats[0].tool_choice, 'required');
      // The result is what the server's get_info answers: the OS and the server's directory.
      const expected = await (await fetch(srv.url + '/tools', {
        method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ tool: 'get_info', params: {} }),
      })).json();
      assert.equal(expected.cwd, dir);
      assert.ok(expected.os);
      const shown = await toolResults(page);
      assert.equal(shown.length, 2);
      for (const r of shown) {
        assert.equal(r.status, 'ok');
        assert.equal(r.name, 'get_info');
        assert.ok(r.text.includes(dir) && r.text.includes(expected.os.split(' ')[0]), r.text);
        assert.deepEqual(JSON.parse(r.text), expected);
      }
      const calls = await page.$$eval('.msg-assistant .tool-call', (l) => l.map((e) => e.textContent));
      assert.equal(calls.length, 2);
      for (const c of calls) assert.match(c, /get_info\s*\{\}/);
      assert.equal(await page.$eval('.msg-tool:last-of-type .note', (e) => e.textContent), 'turn limit reached (2)');
      // The second request carries the first reply's call and its whole result.
      const msgs = sent.chats[1].messages;
      assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool']);
      const call = msgs[1].tool_calls?.[0];
      assert.ok(call?.id);
      assert.deepEqual(call.function, { name: 'get_info', arguments: '{}' });
      assert.equal(msgs[2].tool_call_id, call.id);
      assert.deepEqual(JSON.parse(msgs[2].content), expected);
      assert.deepEqual(sent.errors, []);
      await page.click('.msg-tool summary');
      await shot(page, 'desktop-light-tools-loop');

      // A reply still queued (behind another client's request on the only slot) when the page reloads:
      // the page follows it once it runs, and the loop goes on from it to the turn limit.
      const hold = new AbortController();
      const other = await fetch(srv.url + '/v1/chat/completions', {
        method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, signal: hold.signal,
        body: JSON.stringify({ messages: [{ role: 'user', content: 'Hold on' }], max_tokens: 30000, ignore_eos: true, stream: true }),
      });
      await other.body.getReader().read();  // its stream has started: the slot is taken
      const rec = recordStreams(page);
      const [chats0, tools0] = [sent.chats.length, sent.tools.length];
      try {
        await page.click('#new-chat');
        await send(page, 'Where do you run now?');
        await until('the page\'s request to reach the server', async () => rec.ids.length === 1 && await lookupStream(srv.url, rec.ids[0], auth));
        await page.reload({ waitUntil: 'load' });
        await until('the page to follow the queued reply', () => rec.follows.length === 1);
        assert.deepEqual(rec.follows, [{ id: rec.ids[0], from: '0' }]);
      } finally {
        hold.abort();
      }
      await page.waitForFunction(() => /turn limit \(2\)/.test(document.querySelector('#status')?.textContent), WAIT);
      await page.waitForSelector('#send', WAIT);
      assert.equal(sent.chats.length - chats0, 2, 'one reply before the reload, the loop\'s second after it');
      assert.equal(rec.ids.length, 2);
      assert.notEqual(rec.ids[0], rec.ids[1]);
      assert.equal(sent.tools.length - tools0, 2, 'the calls of both replies ran');
      const resumed = await toolResults(page);
      assert.deepEqual(resumed.map((r) => [r.status, r.name]), [['ok', 'get_info'], ['ok', 'get_info']]);
      const loopMsgs = sent.chats.at(-1).messages;
      assert.deepEqual(loopMsgs.map((m) => m.role), ['user', 'assistant', 'tool']);
      assert.equal(loopMsgs[2].tool_call_id, loopMsgs[1].tool_calls[0].id);
      assert.deepEqual(sent.errors, []);

      // Errors become the call's result: arguments that are not JSON, an HTTP error from POST /tools.
      const first = sse([
        { role: 'assistant', content: '' },
        { tool_calls: [{ index: 0, id: 'call_bad', type: 'function', function: { name: 'get_info', arguments: '{"x": ' } }] },
        { tool_calls: [{ index: 1, id: 'call_500', type: 'function', function: { name: 'get_info', arguments: '{}' } }] },
      ]);
      let mockedChat = false;
      let mockedTool = false;
      await page.setRequestInterception(true);
      page.on('request', (req) => {
        if (req.url().endsWith('/v1/chat/completions') && !mockedChat) {
          mockedChat = true;
          req.respond({ status: 200, contentType: 'text/event-stream', body: first });
        } else if (req.url().endsWith('/tools') && req.method() === 'POST' && !mockedTool) {
          mockedTool = true;
          req.respond({ status: 500, contentType: 'application/json', body: '{"error":{"message":"the tool broke","code":500}}' });
        } else req.continue();
      });
      const before = sent.chats.length;
      await page.click('#new-chat');
      await send(page, 'Try again');
      await page.waitForFunction(() => /turn limit/.test(document.querySelector('#status')?.textContent), WAIT);
      await page.waitForSelector('#send', WAIT);
      const next = sent.chats[before + 1].messages;
      assert.deepEqual(next.map((m) => m.role), ['user', 'assistant', 'tool', 'tool']);
      assert.equal(next[2].tool_call_id, 'call_bad');
      assert.match(next[2].content, /^Error: the arguments are not valid JSON/);
      assert.deepEqual(next[3], { role: 'tool', tool_call_id: 'call_500', content: 'Error: the tool broke' });
      const errs = (await toolResults(page)).slice(0, 2);
      assert.deepEqual(errs.map((r) => r.status), ['error', 'error']);
    } finally {
      await ctx?.close();
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  await step('a write tool asks first: Deny sends "denied" and writes nothing, Stop ends the loop, Always allow runs it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ggserve-webui-tools-'));
    const srv = await startServer(['--tools', 'write_file', '--chat-template-file', TOOL_TEMPLATE], { cwd: dir });
    let ctx;
    try {
      // A fixed seed: the same calls (with short, plain file names) at every run.
      const extra = { tool_choice: 'required', parallel_tool_calls: false, seed: 3, max_tokens: 400 };
      let page, sent;
      ({ ctx, page, sent } = await openWithSettings(srv.url, { extra: JSON.stringify(extra), max_turns: '2' }));
      await send(page, 'Write a story');
      await page.waitForSelector('#tool-confirm', WAIT);
      assert.match(await page.$eval('#tool-confirm', (e) => e.textContent), /write_file[\s\S]*"path"/);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'tool-deny');  // Enter does not allow
      await shot(page, 'desktop-light-tools-confirm');
      await page.click('#tool-deny');
      await until('the next request', () => sent.chats.length === 2);
      const msgs = sent.chats[1].messages;
      assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool']);
      assert.equal(msgs[2].tool_call_id, msgs[1].tool_calls[0].id);
      assert.match(msgs[2].content, /denied/);
      // The second reply asks again; Stop ends the loop there.
      await page.waitForSelector('#tool-confirm', WAIT);
      await page.click('#tool-stop');
      await page.waitForSelector('#send', WAIT);
      assert.equal(await page.$eval('#status', (e) => e.textContent), 'Stopped');
      assert.equal(await page.$('#tool-confirm'), null);
      assert.equal(sent.chats.length, 2);
      assert.equal(sent.tools.length, 0, 'POST /tools was never called');
      assert.deepEqual(readdirSync(dir), [], 'no file was written');
      assert.deepEqual((await toolResults(page)).map((r) => r.status), ['denied']);

      // "Always allow": this call runs, and the next one without asking.
      await send(page, 'Now write it');
      await page.waitForSelector('#tool-confirm', WAIT);
      await page.click('#tool-always');
      await page.waitForFunction(() => /turn limit/.test(document.querySelector('#status')?.textContent), WAIT);
      await page.waitForSelector('#send', WAIT);
      assert.equal(sent.tools.length, 2);
      for (const { body } of sent.tools) {
        assert.equal(body.tool, 'write_file');
        const file = resolve(dir, body.params.path);
        assert.ok(file.startsWith(dir + '/'), `a file inside the directory: ${body.params.path}`);
        assert.equal(readFileSync(file, 'utf8'), body.params.content);
      }
      assert.deepEqual((await toolResults(page)).map((r) => r.status), ['denied', 'ok', 'ok']);
      assert.deepEqual(sent.errors, []);
    } finally {
      await ctx?.close();
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The commands below wait on a FIFO in the server's directory: `read x < gate` blocks until the test
  // writes a line into it, so the test knows what the page can have seen by then. `body({ dir, gate, srv,
  // open })` runs with a server offering exec_shell_command in `dir`; `open(settings)` opens its page.
  const withCommandGate = async (body) => {
    const dir = mkdtempSync(join(tmpdir(), 'ggserve-webui-tools-'));
    const gate = join(dir, 'gate');
    execFileSync('mkfifo', [gate]);
    const srv = await startServer(['--tools', 'exec_shell_command', '--chat-template-file', TOOL_TEMPLATE], { cwd: dir });
    let ctx;
    try {
      await body({ dir, gate, srv, open: async (settings) => {
        const opened = await openWithSettings(srv.url, settings);
        ctx = opened.ctx;
        return opened;
      } });
    } finally {
      await ctx?.close();
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  await step('exec_shell_command streams: its output shows as it comes, the model gets what the call without streaming answers, a server that does not stream still works', () => withCommandGate(async ({ gate, srv, open }) => {
    const command = 'echo first line; read x < gate; echo "then $x"';
    // The reply after the result is stories260K's own: short, and in text (tool_choice none).
    const extra = { tool_choice: 'none', max_tokens: 16 };
    const { page, sent } = await open({ extra: JSON.stringify(extra), max_turns: '2' });
    const mock = await replyRunsCommands(page, [command]);
    await send(page, 'Run it');
    await page.waitForSelector('#tool-confirm', WAIT);
    await page.click('#tool-allow');
    // The first line is on the page while the command still waits for the test.
    await page.waitForFunction(() => document.querySelector('.msg-tool.tool-running pre')?.textContent === 'first line\n', WAIT);
    assert.equal(await page.$eval('#status', (e) => e.textContent), 'Running exec_shell_command…');
    assert.deepEqual(await toolResults(page), [{ status: 'running', name: 'exec_shell_command', text: 'first line\n' }]);
    assert.equal(await page.$eval('.msg-tool.tool-running details', (d) => d.open), true);
    assert.ok(await page.$('#stop'));
    // The reply that made the call is complete: it no longer shows as streaming.
    assert.equal(await page.$('.msg-assistant.streaming'), null);
    assert.deepEqual(sent.tools.map((t) => t.body), [{ tool: 'exec_shell_command', params: { command, timeout: 60 }, stream: true }]);
    assert.equal(sent.chats.length, 1);
    assert.deepEqual(await storedToolNodes(page), []);
    await shot(page, 'desktop-light-tools-running');

    await writeFile(gate, 'go\n');
    await page.waitForSelector('#send', WAIT);
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'Ready', WAIT);
    // The same command without streaming, released the same way, answers what the model got.
    const direct = fetch(srv.url + '/tools', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool: 'exec_shell_command', params: { command, timeout: 60 } }),
    });
    await writeFile(gate, 'go\n');
    const expected = await (await direct).json();
    assert.deepEqual(expected, { plain_text_response: 'first line\nthen go\n\n[exit code: 0]' });
    assert.equal(sent.chats.length, 2);
    const msgs = sent.chats[1].messages;
    assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool']);
    assert.deepEqual(msgs[1].tool_calls.map((t) => t.id), ['call_sh0']);
    assert.deepEqual(msgs[2], { role: 'tool', tool_call_id: 'call_sh0', content: JSON.stringify(expected) });
    assert.deepEqual((await storedToolNodes(page)).map((n) => [n.status, n.content]), [['ok', JSON.stringify(expected)]]);
    // The result shows the output as the command printed it, and stays open.
    assert.deepEqual(await toolResults(page), [{ status: 'ok', name: 'exec_shell_command', text: expected.plain_text_response }]);
    assert.equal(await page.$eval('.msg-tool details', (d) => d.open), true);
    assert.equal(await page.$('.tool-running'), null);
    assert.deepEqual(sent.errors, []);

    // A server that answers with a JSON body (one that does not stream the call): the body is the
    // result, and an HTTP error its message, as without streaming.
    const older = { plain_text_response: 'from a server that does not stream\n[exit code: 0]' };
    mock.commands = ['echo one', 'echo two'];
    mock.toolAnswers = [
      { status: 200, contentType: 'application/json', body: JSON.stringify(older) },
      { status: 400, contentType: 'application/json', body: '{"error":{"message":"streaming is not supported","code":400}}' },
    ];
    await page.click('#new-chat');
    await send(page, 'Run them');
    await page.waitForSelector('#tool-confirm', WAIT);
    await page.click('#tool-always');
    await until('the next reply\'s request', () => sent.chats.length === 4);
    await page.waitForSelector('#send', WAIT);
    assert.equal(mock.toolAnswers.length, 0);
    assert.deepEqual(sent.tools.slice(1).map((t) => t.body.stream), [true, true]);
    const next = sent.chats[3].messages;
    assert.deepEqual(next.slice(2), [
      { role: 'tool', tool_call_id: 'call_sh0', content: JSON.stringify(older) },
      { role: 'tool', tool_call_id: 'call_sh1', content: 'Error: streaming is not supported' },
    ]);
    assert.deepEqual((await toolResults(page)).map((r) => [r.status, r.text]), [['ok', older.plain_text_response], ['error', 'Error: streaming is not supported']]);
  }));

  await step('Stop during a streamed command ends the loop and the server kills the command', () => withCommandGate(async ({ dir, gate, open }) => {
    // Its shell's pid first; released, it would write a file.
    const command = 'echo $$ > pid; echo started; read x < gate; echo released > released';
    const { page, sent } = await open({ extra: JSON.stringify({ tool_choice: 'none', max_tokens: 16 }) });
    await replyRunsCommands(page, [command]);
    await send(page, 'Run it');
    await page.waitForSelector('#tool-confirm', WAIT);
    await page.click('#tool-allow');
    await page.waitForFunction(() => document.querySelector('.msg-tool.tool-running pre')?.textContent === 'started\n', WAIT);
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (e) {
        if (e.code !== 'ESRCH') throw e;
        return false;
      }
    };
    assert.ok(alive(), 'the command runs');
    await page.click('#stop');
    await page.waitForSelector('#send', WAIT);
    assert.equal(await page.$eval('#status', (e) => e.textContent), 'Stopped');
    // Its 60 s timeout is far off: only the page's Stop (the connection closing) ends it.
    await until('the command to be killed', () => !alive());
    // Nothing reads the FIFO any more, so nothing can release the command, and it wrote nothing.
    assert.throws(() => openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK), { code: 'ENXIO' });
    assert.equal(existsSync(join(dir, 'released')), false);
    // The call has no result (as any call the user stopped), and no running output is left.
    assert.deepEqual(await toolResults(page), []);
    assert.deepEqual(await storedToolNodes(page), []);
    assert.equal(await page.$eval('.msg-assistant .note', (e) => e.textContent), 'stopped');
    assert.equal(sent.chats.length, 1);
    assert.equal(sent.tools.length, 1);
    assert.deepEqual(sent.errors, []);
  }));
} finally {
  await browser.close();
  await server.stop();
}

const failed = results.filter(([, ok]) => !ok);
console.log(`\n${results.length - failed.length}/${results.length} passed; screenshots in ${outDir}`);
process.exit(failed.length ? 1 : 0);
