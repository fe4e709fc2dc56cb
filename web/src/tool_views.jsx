// How the agent loop looks: a tool's result in the conversation (collapsed, its first lines; a command's
// output as it printed it), a command still running (open, its output so far), and the dialog that asks
// before a write tool runs.
import { useMemo } from 'preact/hooks';
import { focusOnMount } from './focus.js';
import { resultPreview, resultText } from './tools.js';

const STATUS_LABEL = { ok: 'Result', error: 'Error', denied: 'Denied', running: 'Running' };

// `node`: a tool node, or for a call still running { toolName, status: 'running', content: its output so
// far }. `open`: shown open from the start (a result whose output the user watched arrive).
export function ToolResult({ node, note, open = false }) {
  const running = node.status === 'running';
  const { shown, cut } = useMemo(() => resultPreview(running ? node.content : resultText(node.content)), [running, node.content]);
  return (
    <article class={`msg msg-tool tool-${node.status}`} data-role="tool" aria-busy={running}>
      <details class="tool-result" open={open || running}>
        <summary>
          <span class="tool-label">{STATUS_LABEL[node.status] ?? 'Result'}</span> <code>{node.toolName}</code>
        </summary>
        <pre>{shown}</pre>
        {cut > 0 && <div class="note">… {cut} more characters (the model gets the whole result)</div>}
      </details>
      {note && <footer class="msg-foot"><span class="note">{note}</span></footer>}
    </article>
  );
}

// answer(decision): 'allow' | 'always' | 'deny', or 'stop' (ends the loop).
export function ToolConfirm({ tool, args, answer }) {
  let pretty = args;
  try {
    pretty = JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    // shown as the model wrote it
  }
  return (
    <div class="overlay">
      <div class="dialog" id="tool-confirm" role="dialog" aria-modal="true" aria-labelledby="tool-confirm-title"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            answer('deny');
          }
        }}>
        <h2 id="tool-confirm-title">Run {tool.label}?</h2>
        <p>The model wants to run <code>{tool.name}</code>, which can change files on the server, with:</p>
        <pre class="tool-args">{pretty}</pre>
        <div class="row">
          <button type="button" class="primary" id="tool-allow" onClick={() => answer('allow')}>Allow</button>
          <button type="button" id="tool-always" onClick={() => answer('always')}>Always allow {tool.name} (this session)</button>
          <button type="button" class="push danger" id="tool-deny" ref={focusOnMount} onClick={() => answer('deny')}>Deny</button>
          <button type="button" id="tool-stop" onClick={() => answer('stop')}>Stop</button>
        </div>
      </div>
    </div>
  );
}
