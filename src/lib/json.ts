/**
 * JSON from clients. Text nested deeper than MAX_JSON_DEPTH is refused like malformed text: values
 * of this API are a few levels deep, and a value thousands of levels deep would overflow the
 * stack of whatever walks it recursively afterwards (JSON.stringify, validators). The reference's
 * parser refuses depth beyond its own limit the same way ("… is not valid JSON").
 */

export const MAX_JSON_DEPTH = 100;

/** JSON.parse that throws a SyntaxError for text nested deeper than `maxDepth`. */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  // Nesting beyond maxDepth takes more than 2 * maxDepth characters.
  if (text.length > 2 * maxDepth && nestedDeeperThan(text, maxDepth)) {
    throw new SyntaxError(`JSON nested deeper than ${maxDepth} levels`);
  }
  return JSON.parse(text) as unknown;
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
