/**
 * The server's few HTML pages (accepting an invitation, resetting a password): one small style in
 * the app's colours (light and dark), no script, a Content-Security-Policy that allows only the
 * page's own inline style and forms posted to this server, never cached, and their URLs (which carry keys) never sent as a referrer
 * to another site. `same-origin`, not `no-referrer`: under `no-referrer` a browser sends a form's
 * POST with `Origin: null`, which the cross-site check refuses (the invitation's sign-up failed
 * in every browser).
 */
import { RawBody } from '../http/respond.js';
import { escapeHtml } from '../lib/html.js';

const HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
};

export function htmlPage(
  title: string,
  body: string,
  status = 200,
  headers: Record<string, string> = {},
): RawBody {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--fg:#1d2129;--soft:#5b6270;--border:#cfd3db;--accent:#4f5bd5;--accent-fg:#fff;--danger:#c62f3a}@media (prefers-color-scheme:dark){:root{--bg:#16181d;--card:#22252c;--fg:#e6e8ec;--soft:#a8aebb;--border:#414652;--accent:#8d96f0;--accent-fg:#11131a;--danger:#ff7b84}}body{font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans',Ubuntu,sans-serif;background:var(--bg);color:var(--fg);margin:0;padding:3rem 1rem}main{max-width:26rem;margin:0 auto;background:var(--card);border:1px solid var(--border);border-radius:8px;padding:1.5rem 2rem}h1{font-size:1.5rem;margin:0 0 1rem}p{color:var(--soft)}a{color:var(--accent)}label{display:block;margin:.9rem 0;font-weight:600;font-size:.9rem}input{display:block;width:100%;margin-top:.3rem;padding:.5rem .6rem;box-sizing:border-box;font:inherit;font-weight:400;color:inherit;background:var(--card);border:1px solid var(--border);border-radius:6px}button{font:inherit;font-weight:600;margin-top:.6rem;padding:.55rem 1.2rem;border:0;border-radius:6px;background:var(--accent);color:var(--accent-fg);cursor:pointer}input:focus-visible,button:focus-visible,a:focus-visible{outline:2px solid #5b8def;outline-offset:2px}.error{color:var(--danger)}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
  return new RawBody(html, 'text/html; charset=utf-8', { ...HEADERS, ...headers }, status);
}
