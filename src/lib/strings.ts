/**
 * Lengths of user input as the reference counts them: in Unicode code points (Python's `len`), not
 * UTF-16 units (`s.length`). Checks written by hand use these; params.ts's `str()` bounds count
 * code points too (zod's own `.min`/`.max`).
 */

/**
 * Length in Unicode code points, as the reference counts lengths (Python's `len`): an astral
 * character (most emoji) is one, though it is two UTF-16 units in `s.length`; a lone surrogate is
 * one, as Python counts it. User-input length bounds go through this (or `longerThan` and
 * `shorterThan`), so a name of emoji gets the reference's limit, not half of it.
 */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Whether `s` has more than `max` code points. A string of at most `max` UTF-16 units (the common
 * case) is not counted: it cannot have more code points than units.
 */
export function longerThan(s: string, max: number): boolean {
  return s.length > max && codePointLength(s) > max;
}

/**
 * Whether `s` has fewer than `min` code points. A string of at least 2 × `min` units is not
 * counted: each code point is at most two units.
 */
export function shorterThan(s: string, min: number): boolean {
  return s.length < min || (s.length < 2 * min && codePointLength(s) < min);
}

/**
 * The first `max` code points of `s` (all of `s` when it has no more): a cut as Python's
 * `s[:max]` makes, which never splits a surrogate pair, where `s.slice(0, max)` cuts UTF-16 units
 * and may leave half an emoji. A lone surrogate counts one, as in `codePointLength`.
 */
export function sliceCodePoints(s: string, max: number): string {
  if (s.length <= max) return s;
  let units = 0;
  for (let n = 0; n < max && units < s.length; n++) {
    const c = s.charCodeAt(units);
    const d = s.charCodeAt(units + 1); // NaN past the end: no pair
    units += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  }
  return s.slice(0, units);
}
