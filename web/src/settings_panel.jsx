// The settings dialog: sampling fields (placeholders show the server's defaults from /props), system
// prompt, grammar or JSON schema, the server's tools (when it has some), API key and theme. Saved per browser on "Save"; "Reset" goes back to
// `base`, the built-in defaults with the server's --ui-config over them.
import { useState } from 'preact/hooks';
import { focusOnMount } from './focus.js';
import { SETTINGS_FIELDS, validateSettings } from './settings.js';

export function SettingsPanel({ settings, base, defaults, tools = [], onSave, onClose }) {
  const [s, setS] = useState({ ...settings });
  const errors = validateSettings(s);
  const set = (k) => (e) => setS({ ...s, [k]: e.currentTarget.value });
  const placeholder = (k, propsName) => {
    const v = defaults?.[propsName ?? k];
    return v === undefined || v === null ? 'server default' : String(typeof v === 'number' ? +v.toFixed(4) : v);
  };

  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <form class="dialog settings" id="settings" role="dialog" aria-modal="true" aria-labelledby="settings-title"
        onSubmit={(e) => {
          e.preventDefault();
          if (!Object.keys(errors).length) onSave(s);
        }}>
        <h2 id="settings-title">Settings</h2>
        <label class="full">System prompt
          <textarea name="system" rows={3} value={s.system} onInput={set('system')} ref={focusOnMount} />
        </label>
        <fieldset>
          <legend>Sampling <small>(empty: the server's default)</small></legend>
          <div class="grid">
            {SETTINGS_FIELDS.map(([k, label, kind, propsName]) => (
              <label key={k}>{label}
                <input name={k} inputMode={kind === 'int' ? 'numeric' : 'decimal'} value={s[k]}
                  placeholder={placeholder(k, propsName)} onInput={set(k)} aria-invalid={!!errors[k]} />
                {errors[k] && <span class="field-error">must be {errors[k]}</span>}
              </label>
            ))}
          </div>
        </fieldset>
        <label class="full">Grammar (GBNF)
          <textarea name="grammar" rows={3} value={s.grammar} onInput={set('grammar')} spellcheck={false}
            aria-invalid={!!errors.grammar} />
          {errors.grammar && <span class="field-error">{errors.grammar}</span>}
        </label>
        <label class="full">JSON schema
          <textarea name="json_schema" rows={3} value={s.json_schema} onInput={set('json_schema')} spellcheck={false}
            aria-invalid={!!errors.json_schema} />
          {errors.json_schema && <span class="field-error">{errors.json_schema}</span>}
        </label>
        <label class="full">Extra request fields (a JSON object merged into each request)
          <textarea name="extra" rows={2} value={s.extra} onInput={set('extra')} spellcheck={false}
            placeholder='{"ignore_eos": false}' aria-invalid={!!errors.extra} />
          {errors.extra && <span class="field-error">{errors.extra}</span>}
        </label>
        {tools.length > 0 && (
          <fieldset id="tools-settings">
            <legend>Tools <small>(the server's built-in tools)</small></legend>
            <div class="grid">
              <label class="check">
                <input type="checkbox" name="use_tools" checked={s.use_tools !== 'off'}
                  onChange={(e) => setS({ ...s, use_tools: e.currentTarget.checked ? 'on' : 'off' })} />
                Let the model use them
              </label>
              <label>Max turns (model replies per message)
                <input name="max_turns" inputMode="numeric" value={s.max_turns} placeholder="10" onInput={set('max_turns')}
                  aria-invalid={!!errors.max_turns} />
                {errors.max_turns && <span class="field-error">must be {errors.max_turns}</span>}
              </label>
            </div>
            <p class="tools-list">{tools.map((t) => `${t.name}${t.write ? ' (asks first: writes)' : ''}`).join(', ')}</p>
          </fieldset>
        )}
        <div class="grid">
          <label>API key
            <input name="api_key" type="password" autocomplete="off" value={s.api_key} onInput={set('api_key')} />
          </label>
          <label>Theme
            <select name="theme" value={s.theme} onChange={set('theme')}>
              <option value="auto">System</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
        </div>
        <div class="row">
          <button type="submit" class="primary" id="settings-save" disabled={Object.keys(errors).length > 0}>Save</button>
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="button" class="push" onClick={() => setS({ ...base, api_key: s.api_key, theme: s.theme })}>
            Reset to server defaults
          </button>
        </div>
      </form>
    </div>
  );
}
