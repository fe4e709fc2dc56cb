// Generation settings, saved per browser. An empty field means "the server's default" (shown from
// /props) and is not sent; a filled one goes into the request body under the llama-server name.
//
// Three layers, the later winning: the built-in defaults (DEFAULT_SETTINGS), the server's UI defaults
// (`ui_settings` in /props, from --ui-config; serverUiDefaults maps llama.cpp's setting names onto
// ours), and what the user changed in this browser. Only the user's changes are saved, so a setting the
// user never touched follows the server's configuration.

const KEY = 'ggserve.settings.v2';      // the user's changes only
const OLD_KEY = 'ggserve.settings.v1';  // every setting, saved by earlier versions

// [request field, label, kind ('float' | 'int'), name in /props default_generation_settings]
export const SETTINGS_FIELDS = [
  ['temperature', 'Temperature', 'float'],
  ['top_k', 'Top-k', 'int'],
  ['top_p', 'Top-p', 'float'],
  ['min_p', 'Min-p', 'float'],
  ['typical_p', 'Typical-p', 'float'],
  ['repeat_penalty', 'Repeat penalty', 'float'],
  ['repeat_last_n', 'Repeat last n', 'int'],
  ['presence_penalty', 'Presence penalty', 'float'],
  ['frequency_penalty', 'Frequency penalty', 'float'],
  ['dry_multiplier', 'DRY multiplier', 'float'],
  ['dry_base', 'DRY base', 'float'],
  ['dry_allowed_length', 'DRY allowed length', 'int'],
  ['dry_penalty_last_n', 'DRY penalty last n', 'int'],
  ['xtc_probability', 'XTC probability', 'float'],
  ['xtc_threshold', 'XTC threshold', 'float'],
  ['max_tokens', 'Max tokens', 'int', 'n_predict'],
  ['seed', 'Seed', 'int'],
];

export const DEFAULT_SETTINGS = {
  system: '',
  grammar: '',
  json_schema: '',
  extra: '',
  // The server's built-in tools (only when it has some): 'on' or 'off', and the most model replies one
  // message may start (each reply that calls tools is followed by another, with the tools' results).
  use_tools: 'on',
  max_turns: '10',
  api_key: '',
  theme: 'auto',
  ...Object.fromEntries(SETTINGS_FIELDS.map(([k]) => [k, ''])),
};

// llama.cpp web UI setting names that differ from ours (its settings-config.ts); our own names are
// taken as they are. Its other keys (samplers, dynatemp_*, display options ...) have no counterpart here.
const LLAMA_UI_NAMES = {
  systemMessage: 'system',
  apiKey: 'api_key',
  custom: 'extra',  // both: a JSON object merged into each request
  typ_p: 'typical_p',
  agenticMaxTurns: 'max_turns',
};
const THEMES = { system: 'auto', auto: 'auto', light: 'light', dark: 'dark' };

// Our settings (strings, as the form holds them) from the server's `ui_settings` object; keys we do not
// know and values of the wrong type are left out.
export function serverUiDefaults(ui) {
  const out = {};
  if (!ui || typeof ui !== 'object' || Array.isArray(ui)) return out;
  const numeric = new Set([...SETTINGS_FIELDS.map(([k]) => k), 'max_turns']);
  for (const [name, value] of Object.entries(ui)) {
    const k = LLAMA_UI_NAMES[name] ?? name;
    if (!(k in DEFAULT_SETTINGS)) continue;
    if (k === 'theme') {
      if (typeof value === 'string' && THEMES[value]) out.theme = THEMES[value];
    } else if (numeric.has(k)) {
      if (typeof value === 'number' && Number.isFinite(value)) out[k] = String(value);
      else if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) out[k] = value.trim();
    } else if ((k === 'json_schema' || k === 'extra') && value && typeof value === 'object') {
      out[k] = JSON.stringify(value);
    } else if (typeof value === 'string') {
      out[k] = value;
    }
  }
  return out;
}

// The settings the user changed in this browser ({key: string}).
export function loadUserSettings() {
  const pick = (saved, keep) => {
    const out = {};
    if (!saved || typeof saved !== 'object') return out;
    for (const k of Object.keys(DEFAULT_SETTINGS)) if (typeof saved[k] === 'string' && keep(k, saved[k])) out[k] = saved[k];
    return out;
  };
  try {
    const saved = localStorage.getItem(KEY);
    if (saved !== null) return pick(JSON.parse(saved), () => true);
    // An earlier version saved every setting: those still at the built-in default were never changed.
    return pick(JSON.parse(localStorage.getItem(OLD_KEY) ?? '{}'), (k, v) => v !== DEFAULT_SETTINGS[k]);
  } catch {
    return {};
  }
}

// Saves what differs from `base` (the defaults before the user's changes) and returns it.
export function saveUserSettings(s, base) {
  const changed = {};
  for (const k of Object.keys(DEFAULT_SETTINGS)) if (s[k] !== base[k]) changed[k] = s[k];
  localStorage.setItem(KEY, JSON.stringify(changed));
  return changed;
}

// Checks each filled field; returns { field: message } for the bad ones.
export function validateSettings(s) {
  const errors = {};
  for (const [k, , kind] of SETTINGS_FIELDS) {
    const v = s[k].trim();
    if (!v) continue;
    const n = Number(v);
    if (!Number.isFinite(n) || (kind === 'int' && !Number.isInteger(n))) {
      errors[k] = kind === 'int' ? 'a whole number' : 'a number';
    }
  }
  if (s.json_schema.trim()) {
    try {
      const j = JSON.parse(s.json_schema);
      if (typeof j !== 'object' || j === null) errors.json_schema = 'a JSON object';
    } catch (e) {
      errors.json_schema = `not JSON: ${e.message}`;
    }
  }
  if (s.extra.trim()) {
    try {
      const j = JSON.parse(s.extra);
      if (typeof j !== 'object' || j === null || Array.isArray(j)) errors.extra = 'a JSON object';
    } catch (e) {
      errors.extra = `not JSON: ${e.message}`;
    }
  }
  const turns = s.max_turns.trim();
  if (turns && !(Number.isInteger(Number(turns)) && Number(turns) >= 1 && Number(turns) <= 100)) {
    errors.max_turns = 'a whole number from 1 to 100';
  }
  if (s.grammar.trim() && s.json_schema.trim()) errors.grammar = 'give a grammar or a JSON schema, not both';
  return errors;
}

// The chat messages of the branch `path`. A reply's tool calls go with the results that follow it (its
// `tool` nodes); a call without a result (a stopped loop, a server without tools) is left out.
export function chatMessages(path) {
  const messages = [];
  path.forEach((n, i) => {
    if (n.role === 'tool') {
      messages.push({ role: 'tool', tool_call_id: n.toolCallId, content: n.content });
      return;
    }
    const m = { role: n.role, content: n.content };
    if (n.role === 'assistant' && n.toolCalls?.length) {
      const answered = new Set();
      for (let j = i + 1; path[j]?.role === 'tool'; j++) answered.add(path[j].toolCallId);
      const calls = n.toolCalls.filter((t) => answered.has(t.id));
      if (calls.length) {
        m.tool_calls = calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }));
      }
    }
    messages.push(m);
  });
  return messages;
}

// The most model replies one message may start (the max turns setting; empty: 10).
export const maxTurns = (s) => Number(s.max_turns.trim() || 10);

// The /v1/chat/completions body for the branch `path` (root to the last user or tool message); `tools`:
// the tool definitions offered to the model, or none.
export function buildRequest(s, path, tools = null) {
  const errors = validateSettings(s);
  const bad = Object.keys(errors);
  if (bad.length) throw new Error(`Settings: ${bad[0]} must be ${errors[bad[0]]}`);
  const messages = [];
  if (s.system.trim()) messages.push({ role: 'system', content: s.system });
  messages.push(...chatMessages(path));
  const body = { messages, stream: true };
  if (tools?.length) body.tools = tools;
  for (const [k] of SETTINGS_FIELDS) {
    const v = s[k].trim();
    if (v) body[k] = Number(v);
  }
  if (s.grammar.trim()) body.grammar = s.grammar;
  if (s.json_schema.trim()) body.json_schema = JSON.parse(s.json_schema);
  // Any other field the server takes (llama-server's names: ignore_eos, logit_bias, samplers, tool_choice...).
  if (s.extra.trim()) {
    const { messages: _m, stream: _s, ...extra } = JSON.parse(s.extra);
    Object.assign(body, extra);
  }
  return body;
}
