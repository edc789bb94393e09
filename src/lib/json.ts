/**
 * JSON from clients. Text nested deeper than MAX_JSON_DEPTH is refused like malformed text: values
 * of this API are a few levels deep, and a value thousands of levels deep would overflow the
 * stack of whatever walks it recursively afterwards (JSON.stringify, validators). The reference's
 * parser refuses depth beyond its own limit the same way ("… is not valid JSON").
 *
 * A lone surrogate written as an escape (`"\ud800"`: the only way one reaches the server, since
 * the body's UTF-8 is decoded with replacement) is read as U+FFFD, as the body's broken UTF-8 is.
 * JavaScript would keep it, but nothing downstream can: SQLite, msgpack and the event's JSON each
 * write it differently, so the stored message differed from the one clients were sent.
 */

export const MAX_JSON_DEPTH = 100;

/** JSON.parse that throws a SyntaxError for text nested deeper than `maxDepth`. */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  // Nesting beyond maxDepth takes more than 2 * maxDepth characters.
  if (text.length > 2 * maxDepth && nestedDeeperThan(text, maxDepth)) {
    throw new SyntaxError(`JSON nested deeper than ${maxDepth} levels`);
  }
  const value = JSON.parse(text) as unknown;
  // Any surrogate escape (most are halves of a pair, as Python's json.dumps writes every emoji).
  return SURROGATE_ESCAPE.test(text) ? wellFormedValue(value) : value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `s` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, ES2024). */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/** A parsed JSON value with every string in it, keys too, well formed (depth bounded by parseJson). */
function wellFormedValue(v: unknown): unknown {
  if (typeof v === 'string') return wellFormed(v);
  if (Array.isArray(v)) return v.map(wellFormedValue);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, item] of Object.entries(v)) {
    // defineProperty: a key "__proto__" stays a key, as JSON.parse made it.
    Object.defineProperty(out, wellFormed(k), {
      value: wellFormedValue(item),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Whether arrays and objects in `s` nest deeper than `max` (strings skipped, escapes honoured). */
export function nestedDeeperThan(s: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}
