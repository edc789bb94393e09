/**
 * The server's few HTML pages (accepting an invitation, resetting a password): one plain style,
 * no script, a Content-Security-Policy that allows only the page's own inline style and forms
 * posted to this server, never cached, and their URLs (which carry keys) never sent as a referrer
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
<style>body{font-family:sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.8rem 0}input{display:block;width:100%;padding:.3rem;box-sizing:border-box}.error{color:#a00}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
  return new RawBody(html, 'text/html; charset=utf-8', { ...HEADERS, ...headers }, status);
}
