/**
 * Fields of a response whose values are JSON already: large parts kept serialized between
 * requests (the register snapshot's user lists of a large realm). A handler's value carries them
 * under this symbol; the responder (src/http/respond.ts successJson) writes each as it is, after the
 * value's other fields. A symbol key, so JSON.stringify leaves it out and object spread keeps it.
 * A value is JSON text in chunks (written one after the other, with no copy until the response).
 */
export const PRESERIALIZED = Symbol('preserialized');

export type JsonChunks = readonly (string | Buffer)[];

export type Preserialized = { [PRESERIALIZED]?: Record<string, JsonChunks> };

/** Adds field `name`, whose JSON is `chunks` joined, to `target`'s preserialized fields. */
export function putPreserialized(target: object, name: string, chunks: JsonChunks): void {
  const t = target as Preserialized;
  (t[PRESERIALIZED] ??= {})[name] = chunks;
}

/** The preserialized fields of `value` as `,"name":…` chunks (none when it has none). */
export function preserializedChunks(value: unknown): (string | Buffer)[] {
  const fields = (value as Preserialized | null | undefined)?.[PRESERIALIZED];
  const out: (string | Buffer)[] = [];
  if (fields) for (const name in fields) out.push(`,${JSON.stringify(name)}:`, ...fields[name]!);
  return out;
}
