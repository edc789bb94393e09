// The web app's build (run by `npm run build`, and so by `npm ci` through `prepare`): esbuild
// bundles web/app (Preact + signals, TypeScript, JSX) and its CSS into content-hashed files under
// dist/web/static/, KaTeX's CSS and fonts beside them (loaded by the app only when a message
// shows TeX), then writes dist/web/index.html (no inline script or style: the page's CSP allows
// none), a .gz and a .br sibling of every file, and dist/web/manifest.json:
//   {"files": {"/static/app-<hash>.js": {"type": "text/javascript; charset=utf-8", "size": N}, …}}
// The server (web-server's part) serves dist/web; see docs/web.md.
//
// Emoji: Noto Color Emoji (@infolektuell/noto-color-emoji, OFL-1.1: Google's COLRv1 font, as
// Google Fonts serves it to Chrome and Firefox, in 11 woff2 subsets by Unicode range, 2 MB in all)
// is named in the app's font stacks after the systems' own emoji fonts: a browser fetches a
// subset only when a page shows an emoji that no earlier font has (a Linux desktop without a
// colour-emoji font), and only that subset. Its faces ask for COLRv1 (`tech(color-COLRv1)`): a
// browser without it (Safari, which has Apple's emoji) skips them and fetches nothing.
import * as esbuild from 'esbuild';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const out = path.join(root, 'dist/web');
const staticDir = path.join(out, 'static');
const started = Date.now();

const TYPES = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.json': 'application/json',
};

// The emoji font's stylesheet, under a family name of our own (so that a system's installed 'Noto
// Color Emoji', named before it in the stacks, is still the one used), its files copied as
// /static/emoji-<n>-<hash>.woff2 (the package names them <n>.woff2).
const emojiPackage = 'node_modules/@infolektuell/noto-color-emoji';
// A checkout whose node_modules predates the package (a worktree not yet `npm ci`-ed) still
// builds, without the font and with a warning; `npm ci` installs it (test/browser/app-emoji).
const emojiInstalled = fs.existsSync(path.join(root, emojiPackage, 'index.css'));
if (!emojiInstalled)
  console.warn(`build-web: ${emojiPackage} is missing (run npm ci): no emoji font in this build`);
const emojiFont = {
  name: 'emoji-font',
  setup(build) {
    build.onResolve({ filter: /^@infolektuell\/noto-color-emoji\/index\.css$/ }, () =>
      emojiInstalled ? undefined : { path: 'emoji-font-missing', namespace: 'emoji-font' },
    );
    build.onLoad({ filter: /.*/, namespace: 'emoji-font' }, () => ({
      contents: '',
      loader: 'css',
    }));
    build.onLoad({ filter: /@infolektuell[\\/]noto-color-emoji[\\/]index\.css$/ }, (args) => {
      const css = fs
        .readFileSync(args.path, 'utf8')
        .replaceAll("font-family: 'Noto Color Emoji';", "font-family: 'Confab Emoji';")
        .replace(
          /url\(\.\/files\/(\d+)\.woff2\)/g,
          (_, n) => `url(${hashedCopy(`${emojiPackage}/files/${n}.woff2`, `emoji-${n}.woff2`)})`,
        );
      if (/\.\/files|'Noto Color Emoji'/.test(css) || !css.includes("'Confab Emoji'"))
        throw new Error('build-web: the emoji font stylesheet has changed shape; see emojiFont');
      return { contents: css, loader: 'css' };
    });
  },
};

// KaTeX's stylesheet names each font in three formats; every browser the app supports reads
// woff2, so the others are dropped (20 files instead of 60).
const katexWoff2Only = {
  name: 'katex-woff2-only',
  setup(build) {
    build.onLoad({ filter: /katex\.min\.css$/ }, (args) => ({
      contents: fs
        .readFileSync(args.path, 'utf8')
        .replace(/,url\(fonts\/[^)]+\.woff\) format\("woff"\)/g, '')
        .replace(/,url\(fonts\/[^)]+\.ttf\) format\("truetype"\)/g, ''),
      loader: 'css',
    }));
  },
};

fs.rmSync(staticDir, { recursive: true, force: true });
fs.mkdirSync(staticDir, { recursive: true });

const katexCss = path.join(root, 'node_modules/katex/dist/katex.min.css');
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: 'web/app/main.tsx', katex: katexCss },
  bundle: true,
  format: 'esm',
  splitting: true,
  // CONFAB_WEB_MINIFY=0 keeps names readable (profiling); the default build is minified.
  minify: process.env.CONFAB_WEB_MINIFY !== '0',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  outdir: staticDir,
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  loader: { '.woff2': 'file', '.svg': 'file' },
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: 'web/tsconfig.json',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
  plugins: [katexWoff2Only, emojiFont],
  // The emoji font's files, copied by the plugin above.
  external: ['/static/emoji-*'],
});

const outputs = Object.entries(result.metafile.outputs);
const rel = (p) => '/static/' + path.relative(staticDir, path.resolve(root, p));
const appJs = outputs.find(([, o]) => o.entryPoint === 'web/app/main.tsx');
if (!appJs || !appJs[1].cssBundle)
  throw new Error('build-web: the app bundle or its CSS is missing');
const katex = outputs.find(
  ([p, o]) => o.entryPoint !== undefined && p.endsWith('.css') && /katex-/.test(p),
);
if (!katex) throw new Error('build-web: the KaTeX stylesheet is missing');

/** A file of ours copied under its content hash. */
function hashedCopy(src, name) {
  const data = fs.readFileSync(path.join(root, src));
  const hash = crypto.createHash('sha256').update(data).digest('base64url').slice(0, 8);
  const ext = path.extname(name);
  const file = `${path.basename(name, ext)}-${hash}${ext}`;
  fs.writeFileSync(path.join(staticDir, file), data);
  return `/static/${file}`;
}
const icon = hashedCopy('web/assets/icon.svg', 'icon.svg');

// The chunks the app's script imports statically (code it shares with what is loaded later, such
// as the settings): part of the first load, so fetched beside the script (modulepreload) rather
// than after it has been parsed.
const firstLoad = [];
(function staticImports(file) {
  for (const imp of result.metafile.outputs[file].imports) {
    if (imp.kind !== 'import-statement' || firstLoad.includes(imp.path)) continue;
    firstLoad.push(imp.path);
    staticImports(imp.path);
  }
})(appJs[0]);
const preloads = firstLoad.map((p) => `<link rel="modulepreload" href="${rel(p)}">\n`).join('');

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="confab-katex-css" content="${rel(katex[0])}">
<title>Confab</title>
<link rel="icon" href="${icon}" type="image/svg+xml">
<link rel="stylesheet" href="${rel(appJs[1].cssBundle)}">
<script type="module" src="${rel(appJs[0])}"></script>
${preloads}</head>
<body>
<div id="app"><noscript>Confab's web app needs JavaScript.</noscript></div>
</body>
</html>
`;
fs.writeFileSync(path.join(out, 'index.html'), html);

// Precompressed siblings, and the manifest of what is served under /static/.
const files = {};
const compressible = new Set(['.js', '.css', '.html', '.svg', '.json']);
function compress(file) {
  const data = fs.readFileSync(file);
  // woff2 is compressed inside (Brotli): siblings would be as large, a second and third copy.
  if (path.extname(file) === '.woff2') return data.length;
  const text = compressible.has(path.extname(file));
  fs.writeFileSync(file + '.gz', zlib.gzipSync(data, { level: text ? 9 : 1 }));
  fs.writeFileSync(
    file + '.br',
    zlib.brotliCompressSync(data, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: text ? 11 : 1,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    }),
  );
  return data.length;
}
for (const name of fs.readdirSync(staticDir).sort()) {
  const ext = path.extname(name);
  const size = compress(path.join(staticDir, name));
  files[`/static/${name}`] = { type: TYPES[ext] ?? 'application/octet-stream', size };
}
// The placeholder the server's rendered messages show for an uploaded image until its thumbnail
// is made (src/lib/markdown/previews.ts, LOADING_PLACEHOLDER_SRC: the reference's path, so not
// content-hashed). Ours, a grey spinner seen on both themes.
const LOADER = 'images/loading/loader-black.svg';
fs.mkdirSync(path.join(staticDir, path.dirname(LOADER)), { recursive: true });
fs.copyFileSync(path.join(root, 'web/assets/loader.svg'), path.join(staticDir, LOADER));
files[`/static/${LOADER}`] = { type: TYPES['.svg'], size: compress(path.join(staticDir, LOADER)) };
compress(path.join(out, 'index.html'));
fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({ files }, null, 1) + '\n');

const gz = (p) => fs.statSync(path.join(staticDir, path.basename(p)) + '.gz').size;
const kb = (n) => (n / 1024).toFixed(1);
const firstJs = [appJs[0], ...firstLoad].reduce((n, p) => n + gz(p), 0);
const emojiFiles = Object.entries(files).filter(([p]) =>
  /^\/static\/emoji-\d+-[^/]+\.woff2$/.test(p),
);
const emojiBytes = emojiFiles.reduce((n, [, f]) => n + f.size, 0);
console.log(
  `web app built in ${Date.now() - started} ms: first-load JS ${kb(firstJs)} KB gzip ` +
    `(${[appJs[0], ...firstLoad].map(rel).join(', ')}), ` +
    `${rel(appJs[1].cssBundle)} ${kb(gz(appJs[1].cssBundle))} KB gzip; ` +
    `emoji font ${emojiFiles.length} subsets, ${kb(emojiBytes)} KB (fetched only where used)`,
);
