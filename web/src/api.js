// Talking to the server: JSON requests, the SSE stream of /v1/chat/completions (resumable: the
// X-Conversation-Id streams of /v1/stream and /v1/streams/lookup) and that of a streamed POST /tools call,
// with failures sorted into what the user can act on (unreachable, loading, API key, busy, other). Paths
// are relative to the page, so the UI works under --api-prefix (served at PREFIX/).

export class ApiError extends Error {
  // kind: 'unreachable' | 'loading' | 'auth' | 'busy' | 'http', and for streams 'lost' (the connection
  // broke mid-stream) and 'gone' (the server no longer has a resumable stream)
  constructor(kind, message, status = 0) {
    super(message);
    this.kind = kind;
    this.status = status;
  }
}

function headers(apiKey, json) {
  const h = {};
  if (json) h['Content-Type'] = 'application/json';
  if (apiKey) h['Authorization'] = `Bearer ${apiKey}`;
  return h;
}

async function errorFrom(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body?.error?.message) message = body.error.message;
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401) return new ApiError('auth', 'The server refused the API key: enter a valid one.', 401);
  if (res.status === 503) {
    const loading = /load/i.test(message);
    return new ApiError(loading ? 'loading' : 'busy',
      loading ? 'The server is still loading the model.' : `The server is busy: ${message}`, 503);
  }
  return new ApiError('http', message, res.status);
}

async function send(path, init) {
  try {
    return await fetch(path, init);
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    throw new ApiError('unreachable', 'The server cannot be reached.');
  }
}

export async function getJson(path, apiKey) {
  const res = await send(path, { headers: headers(apiKey, false) });
  if (!res.ok) throw await errorFrom(res);
  return res.json();
}

export async function postJson(path, body, apiKey, signal) {
  const res = await send(path, { method: 'POST', headers: headers(apiKey, true), body: JSON.stringify(body), signal });
  if (!res.ok) throw await errorFrom(res);
  return res.json();
}

// Yields the text of each `data:` line of an event stream as it arrives, until the stream ends.
async function* sseData(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
      // The connection broke mid-stream; a resumable reply may still be running on the server.
      throw new ApiError('lost', 'The connection to the server was lost.');
    }
    const { value, done } = chunk;
    if (done) return;
    buf += value;
    // One pass over what arrived: a page that fell behind reads many events at once, and cutting the
    // buffer after each line would copy the rest of it again for every event.
    let start = 0;
    let nl;
    while ((nl = buf.indexOf('\n', start)) >= 0) {
      const line = buf.slice(start, nl).replace(/\r$/, '');
      start = nl + 1;
      if (line.startsWith('data:')) yield line.slice(5).trim();
    }
    buf = buf.slice(start);
  }
}

// Yields each parsed `data:` object of a chat event stream until `[DONE]`; returns whether `[DONE]` came
// (a stream stopped elsewhere, by DELETE /v1/stream, ends without it).
async function* readEvents(res) {
  for await (const data of sseData(res)) {
    if (data === '[DONE]') return true;
    const obj = JSON.parse(data);
    if (obj.error) throw new ApiError('http', obj.error.message ?? 'the server reported an error');
    yield obj;
  }
  return false;
}

// POSTs `body` to `path` asking for an event stream: resolves to { events } (the parsed `data:` objects,
// as they come), or to { json } when the server answers with a JSON body instead (one that does not
// stream this request).
export async function postForEvents(path, body, apiKey, signal) {
  const res = await send(path, { method: 'POST', headers: headers(apiKey, true), body: JSON.stringify(body), signal });
  if (!res.ok) throw await errorFrom(res);
  if (!/text\/event-stream/.test(res.headers.get('content-type') ?? '')) return { json: await res.json() };
  return { events: parsedEvents(res) };
}

async function* parsedEvents(res) {
  for await (const data of sseData(res)) yield JSON.parse(data);
}

// A conversation id for resumable streams (X-Conversation-Id): 1-256 printable ASCII characters, unique
// per reply, and not guessable (whoever knows it can read the reply while the server keeps it).
export function newStreamId(convId, nodeId) {
  const bytes = crypto.getRandomValues(new Uint8Array(8));  // also outside secure contexts, unlike randomUUID
  const rand = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  const safe = (s) => String(s).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
  return `webui-${safe(convId)}-${safe(nodeId)}-${rand}`;
}

// Streams one chat reply. With `streamId` the request is resumable: the server keeps its events and goes
// on generating when the page goes away (stopStream ends it); without, aborting `signal` closes the
// connection, which makes the server cancel the request and free its slot.
export async function* streamChat(body, apiKey, signal, streamId = '') {
  const h = headers(apiKey, true);
  if (streamId) h['X-Conversation-Id'] = streamId;
  const res = await send('v1/chat/completions', { method: 'POST', headers: h, body: JSON.stringify(body), signal });
  if (!res.ok) throw await errorFrom(res);
  return yield* readEvents(res);
}

// What the server knows of these resumable streams: a Map id -> {is_done, total_bytes, ...}, or null
// when it has no resumable streams (an older or other server: 404, 405, not a list).
export async function lookupStreams(ids, apiKey) {
  const res = await send('v1/streams/lookup', {
    method: 'POST',
    headers: headers(apiKey, true),
    body: JSON.stringify({ conversation_ids: ids }),
  });
  if (res.status === 404 || res.status === 405 || res.status === 501) return null;
  if (!res.ok) throw await errorFrom(res);
  const list = await res.json().catch(() => null);
  if (!Array.isArray(list)) return null;
  return new Map(list.filter((s) => typeof s?.conversation_id === 'string').map((s) => [s.conversation_id, s]));
}

// Replays a resumable stream from its first byte and follows it live to its end: the same events, in
// the same order, as its generation request got. ApiError 'gone' when the server no longer has it (404),
// or cannot replay it (410: it outgrew the replay buffer).
export async function* followStream(id, apiKey, signal) {
  const res = await send(`v1/stream?conv_id=${encodeURIComponent(id)}&from=0`, { headers: headers(apiKey, false), signal });
  if (res.status === 404 || res.status === 410) {
    const e = await errorFrom(res);
    throw new ApiError('gone', e.message, res.status);
  }
  if (!res.ok) throw await errorFrom(res);
  // A server without resumable streams may answer an unknown GET with a page.
  if (!/text\/event-stream/.test(res.headers.get('content-type') ?? '')) throw new ApiError('gone', 'not an event stream', res.status);
  return yield* readEvents(res);
}

// Stops a resumable stream's generation on the server (closing the connection no longer does). Never
// fails: a server without resumable streams closed the generation with the connection already.
export async function stopStream(id, apiKey) {
  try {
    await fetch(`v1/stream?conv_id=${encodeURIComponent(id)}`, { method: 'DELETE', headers: headers(apiKey, false), keepalive: true });
  } catch {
    // unreachable: nothing to stop there
  }
}
