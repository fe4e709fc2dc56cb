// Talking to the server: JSON requests and the SSE stream of /v1/chat/completions, with failures
// sorted into what the user can act on (unreachable, loading, API key, busy, other). Paths are relative
// to the page, so the UI works under --api-prefix (served at PREFIX/).

export class ApiError extends Error {
  // kind: 'unreachable' | 'loading' | 'auth' | 'busy' | 'http'
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

// Yields each parsed `data:` object of the stream until `[DONE]`. Aborting `signal` closes the
// connection, which makes the server cancel the request and free its slot.
export async function* streamChat(body, apiKey, signal) {
  const res = await send('v1/chat/completions', {
    method: 'POST',
    headers: headers(apiKey, true),
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await errorFrom(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    // One pass over what arrived: a page that fell behind reads many events at once, and cutting the
    // buffer after each line would copy the rest of it again for every event.
    let start = 0;
    let nl;
    while ((nl = buf.indexOf('\n', start)) >= 0) {
      const line = buf.slice(start, nl).replace(/\r$/, '');
      start = nl + 1;
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return;
      const obj = JSON.parse(data);
      if (obj.error) throw new ApiError('http', obj.error.message ?? 'the server reported an error');
      yield obj;
    }
    buf = buf.slice(start);
  }
}
