/**
 * Which `timezone` values a user may set: IANA time zone database names, as the reference accepts
 * them (Python's zoneinfo: canonical zones and the database's link names, case-sensitive, e.g.
 * `Asia/Kolkata`, `US/Eastern`, `UTC`, `Etc/GMT+5`).
 *
 * Node's ICU knows every database name, canonical or link, but compares case-insensitively and
 * lists (Intl.supportedValuesOf) only its own canonical spellings, some of them older than the
 * database's (`Asia/Calcutta` where the database says `Asia/Kolkata`). So a name is accepted when
 * it is in that list, or when ICU resolves it and it is spelled as database names are: segments
 * separated by `/`, each starting with an upper-case letter (which refuses `us/eastern`, as
 * zoneinfo does, and ICU's non-database forms such as `GMT+05:00`).
 */

const SUPPORTED: ReadonlySet<string> = new Set(Intl.supportedValuesOf('timeZone'));
const DATABASE_SPELLING = /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)*$/;
const known = new Map<string, boolean>();

export function isValidTimezone(name: string): boolean {
  if (SUPPORTED.has(name)) return true;
  if (name.length > 40 || !DATABASE_SPELLING.test(name)) return false;
  let ok = known.get(name);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: name });
      ok = true;
    } catch {
      ok = false;
    }
    if (known.size < 10_000) known.set(name, ok);
  }
  return ok;
}
