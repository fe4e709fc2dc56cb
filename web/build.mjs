// Builds the chat UI into one bundle: index.html, assets/app-HASH.js, assets/app-HASH.css and
// favicon.svg, each also gzip-compressed (FILE.gz) for the server to embed. Usage:
//   node build.mjs [OUTDIR]        (default: dist/)
// Nothing is fetched: esbuild bundles the pinned packages from node_modules (npm ci).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, 'dist'));

const result = await build({
  entryPoints: [join(here, 'src/main.jsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  write: false,
  outdir: 'out',
  logLevel: 'warning',
});

const files = new Map();  // relative path -> contents
const hashed = (name, ext, data) => {
  const h = createHash('sha256').update(data).digest('hex').slice(0, 12);
  return `assets/${name}-${h}.${ext}`;
};
let js, css;
for (const f of result.outputFiles) {
  if (f.path.endsWith('.js')) js = f.contents;
  else if (f.path.endsWith('.css')) css = f.contents;
}
if (!js || !css) throw new Error('esbuild produced no JS or no CSS');
const jsPath = hashed('app', 'js', js), cssPath = hashed('app', 'css', css);
files.set(jsPath, Buffer.from(js));
files.set(cssPath, Buffer.from(css));
files.set('favicon.svg', readFileSync(join(here, 'favicon.svg')));
const html = readFileSync(join(here, 'index.html'), 'utf8')
  .replace('%APP_JS%', jsPath)
  .replace('%APP_CSS%', cssPath);
if (html.includes('%APP_')) throw new Error('index.html has an unknown placeholder');
files.set('index.html', Buffer.from(html));

rmSync(out, { recursive: true, force: true });
let raw = 0, gz = 0;
for (const [rel, data] of files) {
  const path = join(out, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
  // gzip's header holds no name and mtime 0, so the output is reproducible.
  const z = gzipSync(data, { level: constants.Z_BEST_COMPRESSION });
  writeFileSync(path + '.gz', z);
  raw += data.length;
  gz += z.length;
}
writeFileSync(join(out, 'manifest.json'), JSON.stringify([...files.keys()].sort(), null, 1));
console.log(`web UI: ${files.size} files, ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzip -> ${out}`);
