/**
 * URLs in messages: which links are allowed (a fixed set of schemes; everything else is left as
 * text), how bare URLs are recognized (the reference's web-link pattern: a scheme, or a known
 * top-level domain, with up to six levels of balanced parentheses in the path), and the
 * percent-encoding the reference uses for narrow links.
 */

const ALLOWED_SCHEMES = new Set([
  'http',
  'https',
  'ftp',
  'file',
  // The WHATWG "safelisted schemes".
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
]);

/** Python's urlsplit, as far as the sanitizer needs it. */
function split(url: string): { scheme: string; netloc: string; rest: string; path: string } {
  let scheme = '';
  let rest = url;
  const colon = url.indexOf(':');
  if (colon > 0 && /^[a-zA-Z][a-zA-Z0-9+.-]*$/.test(url.slice(0, colon))) {
    scheme = url.slice(0, colon).toLowerCase();
    rest = url.slice(colon + 1);
  }
  let netloc = '';
  let afterNetloc = rest;
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    netloc = end < 0 ? rest.slice(2) : rest.slice(2, 2 + end);
    afterNetloc = end < 0 ? '' : rest.slice(2 + end);
  }
  const pathEnd = afterNetloc.search(/[?#]/);
  const path = pathEnd < 0 ? afterNetloc : afterNetloc.slice(0, pathEnd);
  return { scheme, netloc, rest, path };
}

/**
 * The href to use for a link target, or null when the link must stay text: only the allowed
 * schemes, site-relative paths and fragments; no scheme means http:// (or mailto: for an address).
 * Control characters never make it into an href.
 */
export function sanitizeUrl(raw: string, depth = 0): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\u0002\u0003]/.test(raw)) return null;
  const url = raw.replace(/ /g, '%20');
  const { scheme, netloc, path } = split(url);
  if (scheme === '' && netloc === '') {
    if (path.includes('@')) return 'mailto:' + url;
    if (path.startsWith('/')) return url;
    if (url.startsWith('#') && url.length > 1) return url;
  }
  if (scheme === '') return depth === 0 ? sanitizeUrl('http://' + raw, 1) : null;
  if (!ALLOWED_SCHEMES.has(scheme)) return null;
  return url;
}

/** Links into this realm's narrows and uploads become relative, as the reference writes them. */
export function rewriteLocalLink(realmUrl: string, href: string): string {
  const prefix = realmUrl + '/';
  if (href.startsWith(prefix + '#') || href.startsWith(prefix + 'user_uploads/'))
    return href.slice(prefix.length);
  return href;
}

/** The upload path id a link refers to, if it is a link to this realm's /user_uploads/. */
export function uploadPathId(realmHost: string, href: string): string | null {
  let rest: string;
  if (href.startsWith('/user_uploads/')) rest = href.slice('/user_uploads/'.length);
  else if (href.startsWith('user_uploads/')) rest = href.slice('user_uploads/'.length);
  else {
    const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)\/user_uploads\/(.*)$/.exec(href);
    if (!m || m[1]!.toLowerCase() !== realmHost.toLowerCase()) return null;
    rest = m[2]!;
  }
  rest = rest.replace(/[?#].*$/, '');
  return rest === '' ? null : rest;
}

/** Python's urllib.parse.quote(s, safe=''): everything but A-Z a-z 0-9 _ . - ~ is escaped. */
export function quote(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
  );
}

/** The reference's hash_util_encode: quote, then `.` → %2E, then `%` → `.`. */
export function hashUtilEncode(s: string): string {
  return quote(s).replace(/\./g, '%2E').replace(/%/g, '.');
}

/** `<id>-<name>` as narrow links spell a channel. */
export function encodeChannel(id: number, name: string): string {
  return `${id}-${hashUtilEncode(name.replace(/ /g, '-'))}`;
}

// ---- bare URLs --------------------------------------------------------------------------------

/**
 * Top-level domains recognized without a scheme. Two-letter country codes are all accepted; the
 * generic ones are the common set. File extensions that read like TLDs (md, py, zip, mov, java)
 * are left out, as the reference does.
 */
const GENERIC_TLDS =
  'com org net edu gov mil int info biz name pro aero coop museum mobi asia tel travel jobs cat app dev xyz online site tech store blog cloud page news shop club live life world design email link wiki media group team tools space website zone chat social network systems solutions services software studio digital agency company academy center community education energy events expert finance fund global guru health help host inc land law legal ltd market money ninja one plus press run school science show support today top trade video vip work works art bank bio black blue red green pink cafe care cash city codes consulting deals direct dog earth eco express farm fashion fit fun games garden gift golf guide house icu institute international kim kitchen lol love management marketing menu mom moe nyc london berlin paris tokyo party photo photography photos pics pizza place poker properties pub racing realty rent repair report rest review reviews rocks sale shoes ski soccer solar style surf tax taxi tips tours town toys training university vacations vegas ventures vision vote voyage watch wedding win wine wtf yoga'.split(
    ' ',
  );
const TLD_EXCLUDED = new Set(['md', 'py', 'zip', 'mov', 'java']);

function tldAlternation(): string {
  const all = GENERIC_TLDS.filter((t) => !TLD_EXCLUDED.has(t)).sort(
    (a, b) => b.length - a.length || (a < b ? -1 : 1),
  );
  // Two-letter country codes (excluding the false positive `md`).
  return `(?:${all.join('|')}|(?!(?:md|py)\\b)[a-z]{2})`;
}

function nestedParens(): string {
  const inner = '[^\\s()"]*';
  const group = (x: string) => `[^\\s()"]*?(?:\\(${x}\\)[^\\s()"]*?)*`;
  let chunk = inner;
  for (let i = 0; i < 7; i++) chunk = group(chunk);
  return chunk;
}

const W = '[\\p{L}\\p{N}_]';

/**
 * The web-link pattern. Group `url` is the link. It starts after whitespace or one of ' " ( , : <
 * (or at the start) and must be followed, after optional closing punctuation, by whitespace or
 * the end.
 */
export const WEB_LINK_RE = new RegExp(
  `(?<![^\\s'"\\(,:<])(?<url>(?:(?:https?:\\/\\/[${W.slice(1, -1)}.:@-]+?|(?:[${W.slice(1, -1)}-]+\\.)+${tldAlternation()})(?:\\/${nestedParens()})?)|(?:[${W.slice(1, -1)}.-]+@[${W.slice(1, -1)}.-]+\\.${W}+)|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34}))(?=[!:;?),.'">]*(?:$|\\s))`,
  'gu',
);
