// The server's built-in tools (`--tools`, `-ag`) and the agent loop that runs them: the model's reply
// calls tools, each call runs through POST /tools (a write tool only once the user allows it), its result
// goes back to the model as a `tool` message, and the model replies again, until a reply calls no tool,
// the turn limit is reached or the user stops. Every failure becomes the call's result text, so the
// model sees it; only a failed model reply ends the loop. A command's output is shown as it comes.
import { ApiError, getJson, postForEvents, postJson } from './api.js';

// The enabled tools from GET /tools: { name, label, write, definition }.
export async function loadTools(apiKey) {
  const list = await getJson('tools', apiKey);
  return (Array.isArray(list) ? list : [])
    .filter((t) => typeof t?.tool === 'string' && t.definition?.type === 'function')
    .map((t) => ({ name: t.tool, label: t.display_name || t.tool, write: !!t.permissions?.write, definition: t.definition }));
}

// The tools whose calls stream their output (`"stream": true`): the one that does on the server, as in
// llama-server.
const STREAMED = new Set(['exec_shell_command']);

// A streamed call: `onOutput(text)` gets the output so far as each chunk arrives. Resolves to what the call
// without streaming answers, so that the model gets the same result either way: { plain_text_response }
// with the whole output (the exit code tail is its last chunk); throws the error that call's HTTP error
// would have given when the server reports the call failed. A server that answers with a JSON body
// instead (one that does not stream the call) gives that body.
async function postStreamed(body, apiKey, signal, onOutput) {
  const answer = await postForEvents('tools', { ...body, stream: true }, apiKey, signal);
  if (!answer.events) return answer.json;
  let text = '';
  for await (const e of answer.events) {
    if (typeof e?.chunk === 'string') {
      text += e.chunk;
      onOutput(text);
    }
    if (e?.done) {
      if (e.error) throw new ApiError('http', String(e.error), 500);
      return { plain_text_response: text };
    }
  }
  throw new ApiError('lost', 'The connection to the server was lost before the command ended.');
}

// Write tools the user allowed "always" (until the page is reloaded).
const alwaysAllowed = new Set();

// The arguments of a call as an object; throws a message the model can act on.
function parseArguments(text) {
  if (!text.trim()) return {};
  let args;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw new Error(`the arguments are not valid JSON (${e.message})`);
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) throw new Error('the arguments must be a JSON object');
  return args;
}

// Runs one call; resolves to { content, status: 'ok' | 'error' | 'denied' }, or throws an AbortError
// when the loop is stopped (which closes a streamed call's connection: the server then kills the
// command). `confirm(tool, args)` asks the user: 'allow' | 'always' | 'deny'; `onOutput(call, text)` gets
// a streamed call's output so far, '' when it starts.
export async function runToolCall(call, tools, { apiKey, signal, confirm, onStatus, onOutput = () => {} }) {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return { status: 'error', content: `Error: there is no tool named "${call.name}"` };
  let args;
  try {
    args = parseArguments(call.arguments);
  } catch (e) {
    return { status: 'error', content: `Error: ${e.message}` };
  }
  if (tool.write && !alwaysAllowed.has(tool.name)) {
    onStatus(`Waiting for your permission to run ${tool.name}…`);
    const answer = await confirm(tool, call.arguments);
    signal.throwIfAborted();
    if (answer === 'deny') return { status: 'denied', content: `Error: the user denied this call of ${tool.name}` };
    if (answer === 'always') alwaysAllowed.add(tool.name);
  }
  onStatus(`Running ${tool.name}…`);
  try {
    const body = { tool: tool.name, params: args };
    let result;
    if (STREAMED.has(tool.name)) {
      onOutput(call, '');
      result = await postStreamed(body, apiKey, signal, (text) => onOutput(call, text));
    } else {
      result = await postJson('tools', body, apiKey, signal);
    }
    const failed = result && typeof result === 'object' && 'error' in result;
    return { status: failed ? 'error' : 'ok', content: JSON.stringify(result) };
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return { status: 'error', content: `Error: ${e.message}` };
  }
}

// The agent loop. `reply(parentId)` streams one model reply into a new assistant node and returns it;
// `addResult(parent, call, result)` stores a call's result as a `tool` node and returns it. Returns
// { limit: true } when it stopped at `maxTurns` replies with calls still wanting an answer. `firstTurn`:
// the turn of the first reply (a reply resumed after a reload may be a later turn of its loop).
export async function agentLoop({ parentId, tools, maxTurns, reply, addResult, firstTurn = 1, ...opts }) {
  for (let turn = firstTurn; ; turn++) {
    const node = await reply(parentId);
    const calls = node.toolCalls ?? [];
    const ended = node.error || node.finish === 'stopped' || node.finish === 'interrupted';
    if (!tools?.length || !calls.length || ended) return { limit: false };
    let last = node;
    for (const call of calls) last = addResult(last, call, await runToolCall(call, tools, opts));
    // As llama.cpp's UI: the calls of the last turn run too, so that the conversation can go on.
    if (turn >= maxTurns) return { limit: true, last };
    parentId = last.id;
  }
}

// The text a result shows: a command's output as it printed it (a result that is a plain_text_response
// alone), anything else as it came.
export function resultText(content) {
  try {
    const r = JSON.parse(content);
    if (r && typeof r === 'object' && typeof r.plain_text_response === 'string' && Object.keys(r).length === 1) {
      return r.plain_text_response;
    }
  } catch {
    // not JSON: an error text
  }
  return content;
}

// What the page shows of a result: its first lines; the model gets it whole.
export function resultPreview(text, maxLines = 20, maxChars = 2000) {
  let shown = text.split('\n').slice(0, maxLines).join('\n');
  if (shown.length > maxChars) shown = shown.slice(0, maxChars);
  return { shown, cut: text.length - shown.length };
}
