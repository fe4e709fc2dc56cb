// The ggserve chat UI: conversations in a sidebar, a chat that streams from /v1/chat/completions (and,
// when the server has built-in tools, runs the model's tool calls: tools.js), settings saved per browser
// (defaults from /props), and a status line from /props and /v1/models.
import { render } from 'preact';
import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { ApiError, followStream, getJson, lookupStreams, newStreamId, stopStream, streamChat } from './api.js';
import { Store } from './store.js';
import { renderMarkdown } from './markdown.js';
import { DEFAULT_SETTINGS, buildRequest, loadUserSettings, maxTurns, saveUserSettings, serverUiDefaults } from './settings.js';
import { SettingsPanel } from './settings_panel.jsx';
import { agentLoop, loadTools } from './tools.js';
import { ToolConfirm, ToolResult } from './tool_views.jsx';
import { focusOnMount } from './focus.js';
import './style.css';

// Store changes render at most once per frame: a reply streaming hundreds of tokens a second would
// otherwise re-render (and re-parse the markdown of) the growing message for every token, and the page
// would fall behind the stream.
let rerender = () => {};
let frame = 0;
function renderSoon() {
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; rerender(); });
}
const store = new Store(renderSoon);

// The tool results whose output this page showed as it came: they stay open when the call ends.
const watched = new Set();

// How long to wait before each new try to follow a reply whose connection was lost (ms).
const RECONNECT_DELAYS = [1000, 2000, 4000, 8000];

// Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts.
function abortableDelay(ms, signal) {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(new DOMException('stopped', 'AbortError'));
    if (signal.aborted) return aborted();
    const onAbort = () => {
      clearTimeout(timer);
      aborted();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

// Set when the page goes away (reload, closed tab): a reply's stream that breaks then is not the reply's
// end, it stays marked as in progress (its `stream`) for the next load to resume. What arrived and is not
// saved yet (saveSoon writes at most twice a second) is saved then: a reply the server no longer has keeps
// all of it. Only then: a page with nothing new must not write its copy over another tab's.
let leaving = false;
window.addEventListener('pagehide', () => {
  leaving = true;
  if (store.timer) store.save();
});
window.addEventListener('pageshow', (e) => {
  if (e.persisted) leaving = false;  // back from the back/forward cache
});

// Reads a generator to its end, handing each value to `onValue`; resolves to what it returns.
async function consume(gen, onValue) {
  for (;;) {
    const { value, done } = await gen.next();
    if (done) return value;
    onValue(value);
  }
}

// One chunk of a chat completion stream, applied to the reply `node`.
function applyChunk(node, chunk) {
  const delta = chunk.choices?.[0]?.delta ?? {};
  if (delta.content) node.content += delta.content;
  if (delta.reasoning_content) node.reasoning = (node.reasoning ?? '') + delta.reasoning_content;
  for (const tc of delta.tool_calls ?? []) {
    node.toolCalls ??= [];
    const t = (node.toolCalls[tc.index ?? 0] ??= { id: '', name: '', arguments: '' });
    if (tc.id) t.id = tc.id;
    if (tc.function?.name) t.name += tc.function.name;
    if (tc.function?.arguments) t.arguments += tc.function.arguments;
  }
  if (chunk.choices?.[0]?.finish_reason) node.finish = chunk.choices[0].finish_reason;
  if (chunk.timings) node.timings = chunk.timings;
  if (chunk.model) node.model = chunk.model;
}

// A reply about to be rebuilt from its stream's first byte.
function clearReply(node) {
  node.content = '';
  for (const k of ['reasoning', 'toolCalls', 'finish', 'timings', 'error', 'interrupted']) delete node[k];
}

// A reply whose stream the server no longer has: what arrived stays, with a note saying why it ends there.
function markInterrupted(node, why) {
  delete node.stream;
  node.finish = 'interrupted';
  node.interrupted = why;
}

function applyTheme(theme) {
  const root = document.documentElement;
  if (theme === 'light' || theme === 'dark') root.dataset.theme = theme;
  else delete root.dataset.theme;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function App() {
  const [, bump] = useReducer((x) => x + 1, 0);
  rerender = bump;
  // The defaults under the user's changes: built-in, then the server's --ui-config (from /props).
  const baseRef = useRef(DEFAULT_SETTINGS);
  const userRef = useRef(null);
  if (userRef.current === null) userRef.current = loadUserSettings();
  const [settings, setSettings] = useState(() => ({ ...DEFAULT_SETTINGS, ...userRef.current }));
  const [activeId, setActiveId] = useState(() => store.sorted()[0]?.id ?? null);
  const [server, setServer] = useState({ model: '', nCtx: 0, slots: 0, defaults: {} });
  const [status, setStatus] = useState({ kind: 'connecting', text: 'Connecting to the server…' });
  const [gen, setGen] = useState(null);  // { convId, nodeId, controller }
  const live = useRef(null);  // the same as it changes, without waiting for a render: { node, controller }
  const [serverTools, setServerTools] = useState([]);  // GET /tools, when /props lists tools
  const [toolAsk, setToolAsk] = useState(null);  // a write tool waiting for the user: { tool, args, answer }
  // A streamed tool call still running, its output growing (rendered once per frame, as a reply's
  // chunks): { convId, name, text }.
  const toolOutput = useRef(null);
  const [showSettings, setShowSettings] = useState(false);
  const [askKey, setAskKey] = useState(false);
  const [sidebar, setSidebar] = useState(false);
  const [query, setQuery] = useState('');
  const [draft, setDraft] = useState('');
  const inputRef = useRef(null);
  const listRef = useRef(null);
  const settingsRef = useRef(settings);
  settingsRef.current = settings;
  const toolsRef = useRef(serverTools);
  toolsRef.current = serverTools;

  useEffect(() => applyTheme(settings.theme), [settings.theme]);

  // Server information; polls /health while the model loads.
  const loadInfo = async () => {
    try {
      const health = await fetch('health').catch(() => null);
      if (!health) throw new ApiError('unreachable', 'The server cannot be reached.');
      if (health.status === 503) throw new ApiError('loading', 'The server is still loading the model.');
      const key = settingsRef.current.api_key;
      const [props, models] = await Promise.all([getJson('props', key), getJson('v1/models', key)]);
      const dgs = props.default_generation_settings ?? {};
      // ggserve lists its built-in tools in /props; a server without any gets no tools request at all.
      const toolsNow = props.server?.tools?.length ? await loadTools(key).catch(() => []) : [];
      setServerTools(toolsNow);
      baseRef.current = { ...DEFAULT_SETTINGS, ...serverUiDefaults(props.ui_settings ?? props.webui_settings) };
      setSettings({ ...baseRef.current, ...userRef.current });
      settingsRef.current = { ...baseRef.current, ...userRef.current };
      setServer({
        model: models?.data?.[0]?.id ?? props.model_alias ?? '',
        nCtx: dgs.n_ctx ?? 0,
        slots: props.total_slots ?? 0,
        defaults: dgs.params ?? dgs,  // llama-server nests the sampling settings in params
      });
      setStatus({ kind: 'ok', text: 'Ready' });
      setAskKey(false);
      toolsRef.current = toolsNow;
      resumeReplies();
    } catch (e) {
      setStatus({ kind: e.kind ?? 'error', text: e.message });
      if (e.kind === 'auth') setAskKey(true);
      if (e.kind === 'loading' || e.kind === 'unreachable') setTimeout(loadInfo, 2000);
    }
  };
  useEffect(() => {
    loadInfo();
  }, []);

  const conv = activeId ? store.get(activeId) : null;
  const path = conv ? store.path(conv) : [];

  // Keeps the newest text in view while streaming, unless the user scrolled up.
  useEffect(() => {
    const el = listRef.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 160) el.scrollTop = el.scrollHeight;
  });

  const updateSettings = (next) => {
    setSettings(next);
    userRef.current = saveUserSettings(next, baseRef.current);
  };

  // Streams one model reply into `node` from `events` (streamChat, or with `resume` followStream, which
  // replays the reply from its first byte: the node is rebuilt from it, so nothing is doubled). A failure
  // is the node's error (an abort is thrown on). `node.stream`, the reply's resumable stream, is cleared
  // once the reply has ended. A connection lost mid-reply does not end it on the server: the page follows
  // the stream again after 1, 2, 4 and 8 s (`signal` stops that too), and after that keeps the stream for a
  // later load to look it up.
  async function streamInto(node, events, { resume = false, signal = null, attempt = 0 } = {}) {
    let started = false;
    // A reply that does not start soon may be queued behind other requests: say so.
    const busyCheck = setTimeout(async () => {
      if (started) return;
      try {
        const slots = await getJson('slots', settingsRef.current.api_key);
        if (!started && Array.isArray(slots) && slots.length && slots.every((s) => s.is_processing)) {
          setStatus({ kind: 'busy', text: `Server busy (${slots.length} of ${slots.length} slots in use): waiting for a free slot…` });
        }
      } catch {
        // /slots may be disabled: nothing to say then
      }
    }, 1500);
    try {
      const complete = await consume(events, (chunk) => {
        if (!started) {
          started = true;
          if (resume) clearReply(node);
          setStatus({ kind: 'ok', text: 'Generating…' });
        }
        applyChunk(node, chunk);
        store.saveSoon();
        renderSoon();
      });
      if (resume && !started) clearReply(node);
      // Without [DONE] the stream was stopped elsewhere (DELETE /v1/stream from another page).
      if (!complete && !node.finish) node.finish = 'stopped';
      // Every call needs an id for its result to name.
      node.toolCalls?.forEach((t, i) => { t.id ||= `call_${node.id}_${i}`; });
      delete node.stream;
    } catch (e) {
      if (e?.name === 'AbortError' || leaving) throw e;
      if (e.kind === 'gone') {
        markInterrupted(node, 'the server no longer has this reply');
        setStatus({ kind: 'ok', text: 'Ready' });
        return;
      }
      // While reconnecting, the server may still be out of reach ('unreachable'); a first request that
      // never reached it has nothing to resume.
      const lost = e.kind === 'lost' || (attempt > 0 && e.kind === 'unreachable');
      if (lost && node.stream && signal && attempt < RECONNECT_DELAYS.length) {
        setStatus({ kind: 'ok', text: 'Connection lost: resuming the reply…' });
        await abortableDelay(RECONNECT_DELAYS[attempt], signal);
        const key = settingsRef.current.api_key;
        return streamInto(node, followStream(node.stream, key, signal), { resume: true, signal, attempt: attempt + 1 });
      }
      node.error = e.message;
      if (e.kind !== 'lost') delete node.stream;
      setStatus({ kind: e.kind ?? 'error', text: e.message });
      if (e.kind === 'auth') setAskKey(true);
    } finally {
      clearTimeout(busyCheck);
      if (!leaving) store.save();
    }
  }

  // Asks the user whether a write tool may run; stopping the loop closes the question.
  const confirmTool = (signal) => (tool, args) => new Promise((resolve) => {
    const answer = (decision) => {
      signal.removeEventListener('abort', onAbort);
      setToolAsk(null);
      resolve(decision);
    };
    const onAbort = () => answer('deny');
    signal.addEventListener('abort', onAbort);
    setToolAsk({ tool, args, answer });
  });

  // Replies to the branch ending at `parentId`: one model reply, or with tools on, the agent loop. With
  // `resume`, an assistant node whose stream the server still has: that reply is followed to its end
  // first (it is the loop's turn it was when the page went away), and the loop goes on from it.
  async function generate(c, parentId, resume = null) {
    const s = settingsRef.current;
    const tools = s.use_tools !== 'off' ? toolsRef.current : [];
    const controller = new AbortController();
    let current = null;  // the newest reply
    let firstTurn = 1;
    if (resume) {
      // The loop's turns so far: the replies since the last user message, this one included.
      const path = store.path(c, resume.id);
      firstTurn = 0;
      for (let i = path.length - 1; i >= 0 && path[i].role !== 'user'; i--) if (path[i].role === 'assistant') firstTurn++;
    }
    setGen({ convId: c.id, nodeId: resume?.id ?? null, controller });
    live.current = { node: resume, controller };
    const reply = async (parent) => {
      const key = settingsRef.current.api_key;
      if (resume) {
        current = resume;
        resume = null;
        setStatus({ kind: 'ok', text: 'Resuming the reply…' });
        await streamInto(current, followStream(current.stream, key, controller.signal), { resume: true, signal: controller.signal });
      } else {
        const request = buildRequest(settingsRef.current, store.path(c, parent), tools.map((t) => t.definition));
        current = store.addNode(c, parent, 'assistant', '');
        // Saved at once: a reload from here on finds the reply and resumes it.
        current.stream = newStreamId(c.id, current.id);
        store.save();
        live.current = { node: current, controller };
        setGen({ convId: c.id, nodeId: current.id, controller });
        await streamInto(current, streamChat(request, key, controller.signal, current.stream), { signal: controller.signal });
      }
      // The reply is complete: while its tool calls run it no longer shows as streaming (Stop still works).
      setGen({ convId: c.id, nodeId: null, controller });
      c.updated = Date.now();
      return current;
    };
    const addResult = (parent, call, result) => {
      const node = store.addNode(c, parent.id, 'tool', result.content);
      Object.assign(node, { toolCallId: call.id, toolName: call.name, status: result.status });
      if (toolOutput.current) watched.add(node.id);
      toolOutput.current = null;
      store.save();
      return node;
    };
    const onOutput = (call, text) => {
      toolOutput.current = { convId: c.id, name: call.name, text };
      renderSoon();
    };
    try {
      const turns = maxTurns(s);
      const { limit, last } = await agentLoop({
        parentId, tools, maxTurns: turns, firstTurn, reply, addResult,
        apiKey: s.api_key, signal: controller.signal, confirm: confirmTool(controller.signal),
        onStatus: (text) => setStatus({ kind: 'ok', text }), onOutput,
      });
      if (limit) {
        last.note = `turn limit reached (${turns})`;
        setStatus({ kind: 'ok', text: `Stopped: the turn limit (${turns}) is reached` });
      } else if (!current?.error) {
        setStatus({ kind: 'ok', text: 'Ready' });
      }
    } catch (e) {
      if (leaving) return;
      if (e?.name === 'AbortError') {
        if (current) current.finish = 'stopped';
        setStatus({ kind: 'ok', text: 'Stopped' });
      } else {
        setStatus({ kind: 'error', text: e.message });
      }
    } finally {
      if (!leaving) store.save();
      live.current = null;
      toolOutput.current = null;
      setGen(null);
      bump();
    }
  }

  // Replies that were streaming when the page went away (their node keeps its `stream`): those the server
  // still has are followed to their end, newest first; the others keep what arrived, marked interrupted.
  // Once per page, when the server is first ready; a server without resumable streams (lookup 404) leaves
  // them interrupted, as a reload did before.
  const resumeChecked = useRef(false);
  async function resumeReplies() {
    if (resumeChecked.current) return;
    resumeChecked.current = true;
    const pending = [];
    for (const c of store.convs) {
      for (const n of Object.values(c.nodes)) if (n.role === 'assistant' && typeof n.stream === 'string') pending.push([c, n]);
    }
    if (!pending.length || live.current) return;
    pending.sort((a, b) => b[1].created - a[1].created);
    let known = null;
    let why = 'this server cannot resume a reply';
    try {
      known = await lookupStreams(pending.map(([, n]) => n.stream), settingsRef.current.api_key);
    } catch (e) {
      why = `the server could not be asked for it (${e.message})`;
    }
    for (const [, n] of pending) if (!known?.has(n.stream)) markInterrupted(n, known ? 'the server no longer has this reply' : why);
    store.save();
    store.changed();
    for (const [c, n] of pending) {
      if (!n.stream || live.current || !store.get(c.id)) continue;
      await generate(c, n.parent, n);
    }
  }

  function send() {
    const text = draft.trim();
    if (!text || gen) return;
    let c = conv;
    if (!c) {
      c = store.create();
      setActiveId(c.id);
    }
    if (c.name === 'New chat') c.name = text.replace(/\s+/g, ' ').slice(0, 40);
    const user = store.addNode(c, c.leaf, 'user', text);
    setDraft('');
    generate(c, user.id);
  }

  // Stops the reply: its resumable stream on the server (closing the connection does not), then the page's
  // side (the stream, a tool request or an open dialog).
  function stop() {
    const cur = live.current;
    if (!cur) return;
    if (cur.node?.stream) {
      stopStream(cur.node.stream, settingsRef.current.api_key);
      delete cur.node.stream;
    }
    cur.controller.abort();
  }

  function newChat() {
    const c = store.create();
    setActiveId(c.id);
    setSidebar(false);
    inputRef.current?.focus();
  }

  useEffect(() => {
    const onKey = (e) => {
      if (e.key === 'Escape') {
        if (gen) stop();
        else if (showSettings) setShowSettings(false);
        else if (sidebar) setSidebar(false);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const q = query.trim().toLowerCase();
  const list = store.sorted().filter(
    (c) => !q || c.name.toLowerCase().includes(q) ||
      Object.values(c.nodes).some((n) => n.content.toLowerCase().includes(q)));

  return (
    <div class={`app${sidebar ? ' sidebar-open' : ''}`}>
      <Sidebar
        list={list}
        activeId={activeId}
        query={query}
        setQuery={setQuery}
        onNew={newChat}
        onOpen={(id) => {
          setActiveId(id);
          setSidebar(false);
        }}
        onDelete={(id) => {
          if (gen?.convId === id) stop();
          store.remove(id);
          if (id === activeId) setActiveId(store.sorted()[0]?.id ?? null);
        }}
        onRename={(id, name) => store.rename(id, name)}
        onStatus={setStatus}
      />
      {sidebar && <div class="backdrop" onClick={() => setSidebar(false)} />}
      <main class="main">
        <header class="topbar">
          <button type="button" class="icon menu-btn" aria-label="Conversations" onClick={() => setSidebar(!sidebar)}>☰</button>
          <div class="model-info" id="model-info">
            <strong>{server.model || 'ggserve'}</strong>
            {server.nCtx ? <span> · context {server.nCtx}</span> : null}
            {server.slots ? <span> · {server.slots} slot{server.slots > 1 ? 's' : ''}</span> : null}
            {serverTools.length > 0 && (
              <span id="tools-info" title={serverTools.map((t) => t.name).join(', ')}>
                {' · '}{serverTools.length} tool{serverTools.length > 1 ? 's' : ''}{settings.use_tools === 'off' ? ' (off)' : ''}
              </span>
            )}
          </div>
          <div class={`status status-${status.kind}`} id="status" role="status" aria-live="polite">{status.text}</div>
          <button type="button" class="icon" aria-label="Toggle theme" title="Theme"
            onClick={() => updateSettings({ ...settings, theme: nextTheme(settings.theme) })}>
            {settings.theme === 'dark' ? '☾' : settings.theme === 'light' ? '☀' : '◐'}
          </button>
          <button type="button" class="icon" id="settings-btn" aria-label="Settings" title="Settings"
            onClick={() => setShowSettings(true)}>⚙</button>
        </header>
        <div class="messages" id="messages" ref={listRef}>
          {path.length === 0 ? (
            <div class="empty">
              <h1>What shall we write?</h1>
              <p>Enter sends, Shift+Enter adds a line, Escape stops a reply.</p>
            </div>
          ) : (
            path.map((n) => n.role === 'tool' ? (
              <ToolResult key={n.id} node={n} note={n.note} open={watched.has(n.id)} />
            ) : (
              <Message
                key={n.id}
                node={n}
                conv={conv}
                streaming={gen?.nodeId === n.id}
                busy={!!gen}
                onRegenerate={() => generate(conv, n.parent)}
                onEdit={(text) => {
                  const user = store.addNode(conv, n.parent, 'user', text);
                  generate(conv, user.id);
                }}
                onSelect={(sib) => store.select(conv, sib)}
              />
            ))
          )}
          {toolOutput.current && toolOutput.current.convId === conv?.id && (
            <ToolResult node={{ toolName: toolOutput.current.name, status: 'running', content: toolOutput.current.text }} />
          )}
        </div>
        <form class="composer" onSubmit={(e) => {
          e.preventDefault();
          send();
        }}>
          <textarea
            id="input"
            ref={inputRef}
            rows={2}
            placeholder="Message (Enter to send, Shift+Enter for a new line)"
            aria-label="Message"
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                send();
              }
            }}
          />
          {gen ? (
            <button type="button" id="stop" class="primary danger" onClick={stop}>Stop</button>
          ) : (
            <button type="submit" id="send" class="primary" disabled={!draft.trim()}>Send</button>
          )}
        </form>
      </main>
      {showSettings && (
        <SettingsPanel
          settings={settings}
          base={baseRef.current}
          defaults={server.defaults}
          tools={serverTools}
          onSave={(s) => {
            updateSettings(s);
            setShowSettings(false);
            if (s.api_key !== settings.api_key) loadInfo();
          }}
          onClose={() => setShowSettings(false)}
        />
      )}
      {toolAsk && (
        <ToolConfirm tool={toolAsk.tool} args={toolAsk.args}
          answer={(decision) => (decision === 'stop' ? stop() : toolAsk.answer(decision))} />
      )}
      {askKey && (
        <ApiKeyDialog
          onSave={(key) => {
            const next = { ...settingsRef.current, api_key: key };
            settingsRef.current = next;
            updateSettings(next);
            setAskKey(false);
            loadInfo();
          }}
          onClose={() => setAskKey(false)}
        />
      )}
    </div>
  );
}

const nextTheme = (t) => (t === 'light' ? 'dark' : t === 'dark' ? 'auto' : 'light');

function Sidebar({ list, activeId, query, setQuery, onNew, onOpen, onDelete, onRename, onStatus }) {
  const [renaming, setRenaming] = useState(null);
  const [armed, setArmed] = useState(null);  // the conversation whose delete awaits confirmation
  const fileRef = useRef(null);

  const exportAll = () => {
    const blob = new Blob([store.exportJson()], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `ggserve-conversations-${new Date().toISOString().slice(0, 10)}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 0);
  };
  const importFile = async (e) => {
    const file = e.currentTarget.files?.[0];
    e.currentTarget.value = '';
    if (!file) return;
    try {
      const n = store.importJson(await file.text());
      onStatus({ kind: 'ok', text: `Imported ${n} conversation${n > 1 ? 's' : ''}` });
    } catch (err) {
      onStatus({ kind: 'error', text: `Import failed: ${err.message}` });
    }
  };

  return (
    <aside class="sidebar" aria-label="Conversations">
      <div class="sidebar-head">
        <button type="button" class="primary wide" id="new-chat" onClick={onNew}>+ New chat</button>
        <input type="search" id="search" placeholder="Search conversations" aria-label="Search conversations"
          value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </div>
      <ul class="conv-list" id="conv-list">
        {list.map((c) => (
          <li key={c.id} class={c.id === activeId ? 'active' : ''}>
            {renaming === c.id ? (
              <input
                class="rename"
                aria-label="New name"
                value={c.name}
                ref={focusOnMount}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    onRename(c.id, e.currentTarget.value);
                    setRenaming(null);
                  } else if (e.key === 'Escape') {
                    e.stopPropagation();
                    setRenaming(null);
                  }
                }}
                onBlur={(e) => {
                  onRename(c.id, e.currentTarget.value);
                  setRenaming(null);
                }}
              />
            ) : (
              <button type="button" class="conv-name" onClick={() => onOpen(c.id)} title={c.name}>{c.name}</button>
            )}
            <button type="button" class="icon small" aria-label={`Rename ${c.name}`} title="Rename"
              onClick={() => setRenaming(c.id)}>✎</button>
            <button type="button" class={`icon small${armed === c.id ? ' danger' : ''}`}
              aria-label={armed === c.id ? `Confirm deleting ${c.name}` : `Delete ${c.name}`}
              title={armed === c.id ? 'Click again to delete' : 'Delete'}
              onBlur={() => setArmed(null)}
              onClick={() => {
                if (armed === c.id) {
                  setArmed(null);
                  onDelete(c.id);
                } else setArmed(c.id);
              }}>{armed === c.id ? '✓' : '×'}</button>
          </li>
        ))}
        {list.length === 0 && <li class="none">{query ? 'No match' : 'No conversations yet'}</li>}
      </ul>
      <div class="sidebar-foot">
        <button type="button" onClick={exportAll}>Export</button>
        <button type="button" onClick={() => fileRef.current?.click()}>Import</button>
        <input type="file" accept="application/json,.json" ref={fileRef} hidden onChange={importFile} />
      </div>
    </aside>
  );
}

function Message({ node, conv, streaming, busy, onRegenerate, onEdit, onSelect }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(node.content);
  const [copied, setCopied] = useState(false);
  // Only the message whose text changed is rendered again while a reply streams.
  const html = useMemo(() => (node.role === 'user' ? '' : renderMarkdown(node.content)), [node.role, node.content]);
  const sibs = store.siblings(conv, node);
  const idx = sibs.findIndex((s) => s.id === node.id);
  const t = node.timings;

  const onContentClick = async (e) => {
    const btn = e.target.closest?.('.copy-code');
    if (!btn) return;
    const code = btn.closest('.code-block')?.querySelector('code');
    if (code && (await copyText(code.textContent))) {
      btn.textContent = 'Copied';
      setTimeout(() => (btn.textContent = 'Copy'), 1200);
    }
  };

  return (
    <article class={`msg msg-${node.role}${streaming ? ' streaming' : ''}`} data-role={node.role} aria-busy={streaming}>
      {node.reasoning && (
        <details class="reasoning" open={streaming && !node.content}>
          <summary>Reasoning</summary>
          <div class="reasoning-body">{node.reasoning}</div>
        </details>
      )}
      {editing ? (
        <div class="edit">
          <textarea aria-label="Edit message" value={text} rows={3} ref={focusOnMount}
            onInput={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.stopPropagation();
                setEditing(false);
              }
            }} />
          <div class="row">
            <button type="button" class="primary" disabled={busy || !text.trim()} onClick={() => {
              setEditing(false);
              onEdit(text.trim());
            }}>Send as new branch</button>
            <button type="button" onClick={() => setEditing(false)}>Cancel</button>
          </div>
        </div>
      ) : node.role === 'user' ? (
        <div class="content plain">{node.content}</div>
      ) : (
        <div class="content markdown" onClick={onContentClick} dangerouslySetInnerHTML={{ __html: html }} />
      )}
      {node.toolCalls?.length > 0 && (
        <div class="tool-calls">
          {node.toolCalls.map((tc, i) => (
            <div class="tool-call" key={i}>
              <span class="tool-label">Tool call</span> <code>{tc.name}</code>
              <pre>{tc.arguments}</pre>
            </div>
          ))}
        </div>
      )}
      {node.error && <div class="msg-error" role="alert">{node.error}</div>}
      <footer class="msg-foot">
        {sibs.length > 1 && (
          <span class="branches">
            <button type="button" class="icon small" aria-label="Previous version" disabled={busy || idx <= 0}
              onClick={() => onSelect(sibs[idx - 1])}>‹</button>
            <span>{idx + 1}/{sibs.length}</span>
            <button type="button" class="icon small" aria-label="Next version" disabled={busy || idx >= sibs.length - 1}
              onClick={() => onSelect(sibs[idx + 1])}>›</button>
          </span>
        )}
        {node.role === 'assistant' && t && (
          <span class="timings" title={`prompt: ${t.prompt_n} tokens, ${fmt(t.prompt_per_second)} t/s`}>
            {t.predicted_n} tokens · {fmt(t.predicted_per_second)} t/s · prompt {t.prompt_n}
          </span>
        )}
        {node.finish === 'stopped' && <span class="note">stopped</span>}
        {node.finish === 'length' && <span class="note">token limit reached</span>}
        {node.finish === 'interrupted' && (
          <span class="note interrupted" title={node.interrupted}>
            interrupted: {node.interrupted ?? 'the reply did not finish'}; Regenerate for a new one
          </span>
        )}
        <span class="actions">
          <button type="button" class="small" onClick={async () => {
            if (await copyText(node.content)) {
              setCopied(true);
              setTimeout(() => setCopied(false), 1200);
            }
          }}>{copied ? 'Copied' : 'Copy'}</button>
          {node.role === 'user' && !editing && (
            <button type="button" class="small edit-btn" disabled={busy} onClick={() => {
              setText(node.content);
              setEditing(true);
            }}>Edit</button>
          )}
          {node.role === 'assistant' && (
            <button type="button" class="small regen-btn" disabled={busy} onClick={onRegenerate}>Regenerate</button>
          )}
        </span>
      </footer>
    </article>
  );
}

const fmt = (x) => (typeof x === 'number' && isFinite(x) ? x.toFixed(1) : '–');

function ApiKeyDialog({ onSave, onClose }) {
  const [key, setKey] = useState('');
  return (
    <div class="overlay">
      <form class="dialog" id="api-key-dialog" role="dialog" aria-modal="true" aria-labelledby="api-key-title"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) onSave(key.trim());
        }}>
        <h2 id="api-key-title">API key needed</h2>
        <p>This server was started with <code>--api-key</code>. The key is kept in this browser only.</p>
        <input type="password" id="api-key-input" aria-label="API key" autocomplete="off" value={key}
          ref={focusOnMount} onInput={(e) => setKey(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" class="primary" disabled={!key.trim()}>Save</button>
          <button type="button" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </div>
  );
}


render(<App />, document.getElementById('app'));
