// Generation settings, saved per browser. An empty field means "the server's default" (shown from
// /props) and is not sent; a filled one goes into the request body under the llama-server name.

const KEY = 'ggserve.settings.v1';

// [request field, label, kind ('float' | 'int'), name in /props default_generation_settings]
export const SETTINGS_FIELDS = [
  ['temperature', 'Temperature', 'float'],
  ['top_k', 'Top-k', 'int'],
  ['top_p', 'Top-p', 'float'],
  ['min_p', 'Min-p', 'float'],
  ['typical_p', 'Typical-p', 'float'],
  ['repeat_penalty', 'Repeat penalty', 'float'],
  ['repeat_last_n', 'Repeat last n', 'int'],
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
  api_key: '',
  theme: 'auto',
  ...Object.fromEntries(SETTINGS_FIELDS.map(([k]) => [k, ''])),
};

export function loadSettings() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? '{}');
    const out = { ...DEFAULT_SETTINGS };
    for (const k of Object.keys(DEFAULT_SETTINGS)) if (typeof saved?.[k] === 'string') out[k] = saved[k];
    return out;
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(s) {
  localStorage.setItem(KEY, JSON.stringify(s));
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
  if (s.grammar.trim() && s.json_schema.trim()) errors.grammar = 'give a grammar or a JSON schema, not both';
  return errors;
}

// The /v1/chat/completions body for the branch `path` (root to the last user message).
export function buildRequest(s, path) {
  const errors = validateSettings(s);
  const bad = Object.keys(errors);
  if (bad.length) throw new Error(`Settings: ${bad[0]} must be ${errors[bad[0]]}`);
  const messages = [];
  if (s.system.trim()) messages.push({ role: 'system', content: s.system });
  for (const n of path) messages.push({ role: n.role, content: n.content });
  const body = { messages, stream: true };
  for (const [k] of SETTINGS_FIELDS) {
    const v = s[k].trim();
    if (v) body[k] = Number(v);
  }
  if (s.grammar.trim()) body.grammar = s.grammar;
  if (s.json_schema.trim()) body.json_schema = JSON.parse(s.json_schema);
  // Any other field the server takes (llama-server's names: ignore_eos, logit_bias, samplers, ...).
  if (s.extra.trim()) {
    const { messages: _m, stream: _s, ...extra } = JSON.parse(s.extra);
    Object.assign(body, extra);
  }
  return body;
}
