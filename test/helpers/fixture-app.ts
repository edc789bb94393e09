/**
 * A minimal app build, laid out as `npm run build` lays out the real one (index.html without
 * inline script or style, content-hashed assets under static/ with .br/.gz siblings), for tests
 * of the server's side of the browser app that must not depend on the real client: a login form
 * that calls POST /json/login, a view that shows GET /json/session's e-mail, a logout button
 * (with the CSRF token), all in one external script.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Fixture app</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/fixture-7e1c.css">
<script type="module" src="/static/fixture-51b0.js"></script>
</head>
<body>
<form id="login" hidden>
  <label>Email <input name="username" autocomplete="username"></label>
  <label>Password <input name="password" type="password" autocomplete="current-password"></label>
  <button type="submit">Log in</button>
  <p id="error" role="alert"></p>
</form>
<main id="app" hidden>
  <p>Logged in as <strong id="who"></strong></p>
  <button id="logout" type="button">Log out</button>
  <div id="content"></div>
</main>
</body>
</html>
`;

const SCRIPT = `const $ = (id) => document.getElementById(id);
let csrf = '';
async function show() {
  const r = await fetch('/json/session');
  const loggedIn = r.ok;
  if (loggedIn) {
    const s = await r.json();
    csrf = s.csrf_token;
    $('who').textContent = s.email;
  }
  $('login').hidden = loggedIn;
  $('app').hidden = !loggedIn;
  document.body.dataset.state = loggedIn ? 'app' : 'login';
}
$('login').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await fetch('/json/login', { method: 'POST', body: new URLSearchParams(new FormData(e.target)) });
  if (!r.ok) {
    $('error').textContent = (await r.json()).msg;
    document.body.dataset.state = 'error';
    return;
  }
  $('error').textContent = '';
  await show();
});
$('logout').addEventListener('click', async () => {
  await fetch('/json/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf } });
  await show();
});
window.fixtureCsrf = () => csrf;
show();
`;

const STYLE = `body { font-family: sans-serif; margin: 2rem; }
label { display: block; margin: .5rem 0; }
#error { color: #a00; }
`;

function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(content));
  fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(content));
}

/** Writes the fixture build into `dir` (made if needed) and returns `dir`. */
export function writeFixtureApp(dir: string): string {
  write(path.join(dir, 'index.html'), INDEX);
  write(path.join(dir, 'static', 'fixture-51b0.js'), SCRIPT);
  write(path.join(dir, 'static', 'fixture-7e1c.css'), STYLE);
  return dir;
}
