// Model output -> safe HTML: markdown (marked), code highlighted by highlight.js (a few languages),
// raw HTML in the output shown as text, and the result sanitized by DOMPurify all the same.
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

for (const [name, lang] of Object.entries({ bash, c, cpp, css, javascript, json, python, rust, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}

export const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    // HTML written by the model is text, never markup.
    html({ text }) {
      return escapeHtml(text);
    },
    // Images would be fetched from elsewhere (and the page allows only its own origin): a link instead.
    image({ href, text }) {
      return `<a href="${escapeHtml(href)}" rel="noopener noreferrer" target="_blank">${escapeHtml(text || href)}</a>`;
    },
    code({ text, lang }) {
      const name = (lang || '').trim().split(/\s+/)[0].toLowerCase();
      const known = name && hljs.getLanguage(name);
      const body = known ? hljs.highlight(text, { language: name, ignoreIllegals: true }).value : escapeHtml(text);
      return `<div class="code-block"><div class="code-head"><span>${escapeHtml(name || 'text')}</span>` +
        `<button type="button" class="copy-code" aria-label="Copy code">Copy</button></div>` +
        `<pre><code class="hljs">${body}</code></pre></div>`;
    },
  },
});

const PURIFY = {
  FORBID_TAGS: ['style', 'img', 'form', 'input', 'textarea', 'select', 'iframe', 'svg', 'math'],
  FORBID_ATTR: ['style', 'id', 'name'],
};

export function renderMarkdown(src) {
  return DOMPurify.sanitize(marked.parse(src ?? ''), PURIFY);
}
