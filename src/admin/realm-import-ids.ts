/**
 * Id remapping of a realm import (src/admin/realm-import.ts): the map from the archive's ids to
 * the new rows' ids, table by table, and the rewriting of references held inside values: message
 * text and HTML, JSON settings, group settings, user lists, edit histories, custom emoji codes.
 */
import { cellText, type Row } from '../storage/realm-dump.js';
import { UsageError } from './errors.js';

/** Old id → new id, per table. */
export class IdMaps {
  private readonly maps = new Map<string, Map<number, number>>();

  assign(table: string, rows: readonly Row[], after: number): void {
    const m = new Map<number, number>();
    let next = after;
    for (const r of rows) m.set(Number(r.id), ++next);
    this.maps.set(table, m);
  }

  /** The new id, or undefined when the archive has no such row (a dangling reference). */
  get(table: string, old: unknown): number | undefined {
    if (old === null || old === undefined) return undefined;
    return this.maps.get(table)?.get(Number(old));
  }

  /** For a column that must name a row of the archive. */
  need(table: string, old: unknown): number {
    const id = this.get(table, old);
    if (id === undefined) throw new UsageError(`the archive's ${table} has no row ${String(old)}`);
    return id;
  }

  /** For a nullable column: dangling references become null. */
  opt(table: string, old: unknown): number | null {
    return this.get(table, old) ?? null;
  }
}

/** Rewrites ids inside message text, HTML and URLs. */
export function textRemapper(
  ids: IdMaps,
  oldRealm: number,
  newRealm: number,
): (s: string) => string {
  const map = (table: string, n: string) => String(ids.get(table, Number(n)) ?? n);
  const users = (list: string) =>
    list
      .split(',')
      .map((n) => map('users', n))
      .join(',');
  return (s) =>
    s
      .replace(
        /\/user_uploads\/(thumbnail\/)?(\d+)\//g,
        (all, thumb: string | undefined, r: string) =>
          Number(r) === oldRealm ? `/user_uploads/${thumb ?? ''}${newRealm}/` : all,
      )
      .replace(/\/user_avatars\/(\d+)\/emoji\//g, (all, r: string) =>
        Number(r) === oldRealm ? `/user_avatars/${newRealm}/emoji/` : all,
      )
      .replace(/data-user-id="(\d+)"/g, (_, n: string) => `data-user-id="${map('users', n)}"`)
      .replace(/data-stream-id="(\d+)"/g, (_, n: string) => `data-stream-id="${map('streams', n)}"`)
      .replace(
        /data-user-group-id="(\d+)"/g,
        (_, n: string) => `data-user-group-id="${map('user_groups', n)}"`,
      )
      .replace(
        /(#narrow\/(?:channel|stream)\/)(\d+)(?=[-/"'\s)]|$)/g,
        (_, pre: string, n: string) => pre + map('streams', n),
      )
      .replace(
        /(#narrow\/(?:dm|pm-with)\/)([\d,]+)(?=[-/"'\s)]|$)/g,
        (_, pre: string, list: string) => pre + users(list),
      )
      .replace(
        /(\/(?:near|with)\/)(\d+)(?=[/"'\s)]|$)/g,
        (_, pre: string, n: string) => pre + map('messages', n),
      )
      .replace(
        /(@_?\*\*[^*|\n]*\|)(\d+)(\*\*)/g,
        (_, a: string, n: string, b: string) => a + map('users', n) + b,
      )
      .replace(
        /(#\*\*[^*\n]*@)(\d+)(\*\*)/g,
        (_, a: string, n: string, b: string) => a + map('messages', n) + b,
      );
}

/** A group-setting value: a group id, or an anonymous group of users and groups. */
function remapGroupSetting(ids: IdMaps, v: unknown): unknown {
  if (typeof v === 'number') return ids.get('user_groups', v) ?? v;
  if (v !== null && typeof v === 'object' && 'direct_members' in v && 'direct_subgroups' in v) {
    const g = v as { direct_members: number[]; direct_subgroups: number[] };
    return {
      direct_members: g.direct_members
        .map((u) => ids.get('users', u))
        .filter((u) => u !== undefined),
      direct_subgroups: g.direct_subgroups
        .map((x) => ids.get('user_groups', x))
        .filter((x) => x !== undefined),
    };
  }
  return v;
}

/** A JSON settings column: channel ids (`*_stream_id`, `*_channel_id`) and group settings. */
export function remapSettings(ids: IdMaps, json: unknown): string {
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(cellText(json) || '{}') as Record<string, unknown>;
  } catch {
    return '{}';
  }
  for (const [k, v] of Object.entries(obj)) {
    if (/_(stream|channel)_id$/.test(k) && typeof v === 'number' && v > 0) {
      obj[k] = ids.get('streams', v) ?? -1;
    } else if (/_group$/.test(k)) {
      obj[k] = remapGroupSetting(ids, v);
    }
  }
  return JSON.stringify(obj);
}

/** A stored group-setting column (JSON text of a group id or an anonymous group). */
export function remapGroupSettingText(ids: IdMaps, text: unknown): string {
  try {
    return JSON.stringify(remapGroupSetting(ids, JSON.parse(String(text))));
  } catch {
    return String(text);
  }
}

export function remapUserList(ids: IdMaps, list: unknown, sort: boolean): string {
  const out = cellText(list)
    .split(',')
    .filter((s) => s !== '')
    .map((s) => ids.need('users', Number(s)));
  if (sort) out.sort((a, b) => a - b);
  return out.join(',');
}

export function remapEditHistory(ids: IdMaps, text: (s: string) => string, json: unknown): unknown {
  if (json === null || json === undefined) return null;
  let entries: Record<string, unknown>[];
  try {
    entries = JSON.parse(cellText(json)) as Record<string, unknown>[];
  } catch {
    return json;
  }
  for (const e of entries) {
    if (e.user_id !== undefined && e.user_id !== null) e.user_id = ids.opt('users', e.user_id);
    for (const k of ['stream', 'prev_stream'])
      if (typeof e[k] === 'number') e[k] = ids.get('streams', e[k]) ?? e[k];
    for (const k of ['prev_content', 'prev_rendered_content'])
      if (typeof e[k] === 'string') e[k] = text(e[k]);
  }
  return JSON.stringify(entries);
}

/** The reaction/status emoji code of a custom emoji is its id. */
export function remapEmojiCode(ids: IdMaps, type: unknown, code: unknown): unknown {
  return type === 'realm_emoji' ? String(ids.get('realm_emoji', Number(code)) ?? code) : code;
}

/** An upload's path id with the new realm's id in front (`<realm>/<xx>/<random>/<name>`). */
export function newPathId(pathId: string, oldRealm: number, newRealm: number): string {
  const [first, ...rest] = pathId.split('/');
  return Number(first) === oldRealm ? [String(newRealm), ...rest].join('/') : pathId;
}
