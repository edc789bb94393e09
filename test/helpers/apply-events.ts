/**
 * A client's view of the register snapshot kept current by events, as the reference's clients
 * apply them (the reference's "hybrid state" test idea, for the events of the settings and
 * administration area): tests register, act, apply the events their queue got to the first
 * snapshot, and compare with a fresh snapshot.
 */
import type { Ev } from './events.js';

type State = Record<string, unknown>;
type Person = Record<string, unknown> & { user_id: number };

function applyPerson(state: State, person: Person): void {
  for (const key of ['realm_users', 'realm_non_active_users']) {
    const users = state[key] as Person[] | undefined;
    const u = users?.find((x) => x.user_id === person.user_id);
    if (!u) continue;
    for (const [k, v] of Object.entries(person)) {
      if (k === 'user_id') continue;
      if (k === 'new_email') u.email = v;
      else if (k === 'role') {
        u.role = v;
        u.is_owner = v === 100;
        u.is_admin = (v as number) <= 200;
        u.is_guest = v === 600;
      } else if (k === 'custom_profile_field') {
        const f = v as { id: number; value: unknown; rendered_value?: string };
        const data = (u.profile_data ?? {}) as Record<string, unknown>;
        if (f.value === null) delete data[String(f.id)];
        else
          data[String(f.id)] =
            f.rendered_value !== undefined
              ? { value: f.value, rendered_value: f.rendered_value }
              : { value: f.value };
        u.profile_data = data;
      } else if (k === 'is_active') {
        // Moves between the active and the non-active lists.
        const from = v ? 'realm_non_active_users' : 'realm_users';
        const to = v ? 'realm_users' : 'realm_non_active_users';
        const list = state[from] as Person[];
        const i = list.findIndex((x) => x.user_id === person.user_id);
        if (i >= 0) {
          const [moved] = list.splice(i, 1);
          (state[to] as Person[]).push(moved!);
          (state[to] as Person[]).sort((a, b) => a.user_id - b.user_id);
        }
      } else u[k] = v;
    }
  }
  if (person.user_id === state.user_id && typeof person.full_name === 'string')
    state.full_name = person.full_name;
  if (person.user_id === state.user_id && typeof person.delivery_email === 'string')
    state.delivery_email = person.delivery_email;
  if (person.user_id === state.user_id && typeof person.new_email === 'string')
    state.email = person.new_email;
  if (person.user_id === state.user_id && typeof person.role === 'number') {
    state.is_owner = person.role === 100;
    state.is_admin = person.role <= 200;
    state.is_moderator = person.role === 300;
    state.is_guest = person.role === 600;
  }
}

/** Applies the events the settings/administration area emits to a register snapshot, in place. */
export function applyEvents(state: State, events: readonly Ev[]): void {
  for (const e of events) {
    switch (e.type) {
      case 'user_settings':
        if (e.op === 'update') {
          const s = state.user_settings as State | undefined;
          if (s) s[e.property as string] = e.value;
        }
        break;
      case 'update_display_settings':
        state[e.setting_name as string] = e.setting;
        break;
      case 'update_global_notifications':
        state[e.notification_name as string] = e.setting;
        break;
      case 'realm':
        if (e.op === 'update') state[`realm_${e.property as string}`] = e.value;
        if (e.op === 'update_dict')
          for (const [k, v] of Object.entries(e.data as State)) state[`realm_${k}`] = v;
        break;
      case 'realm_user':
        if (e.op === 'update') applyPerson(state, e.person as Person);
        break;
      case 'custom_profile_fields': {
        state.custom_profile_fields = e.fields;
        // Clients forget the values of fields that no longer exist.
        const ids = new Set((e.fields as { id: number }[]).map((f) => String(f.id)));
        for (const u of (state.realm_users ?? []) as { profile_data?: Record<string, unknown> }[])
          for (const k of Object.keys(u.profile_data ?? {}))
            if (!ids.has(k)) delete u.profile_data![k];
        break;
      }
      case 'user_group': {
        const groups = state.realm_user_groups as
          { id: number; members: number[]; [k: string]: unknown }[] | undefined;
        const g = groups?.find((x) => x.id === e.group_id);
        if (!g) break;
        const ids = e.user_ids as number[];
        if (e.op === 'add_members')
          g.members = [...new Set([...g.members, ...ids])].sort((a, b) => a - b);
        if (e.op === 'remove_members') g.members = g.members.filter((id) => !ids.includes(id));
        break;
      }
      case 'stream': {
        const streams = state.streams as { stream_id: number; name: string }[] | undefined;
        if (!streams) break;
        if (e.op === 'create') {
          for (const s of e.streams as { stream_id: number }[])
            if (!streams.some((x) => x.stream_id === s.stream_id))
              streams.push(s as (typeof streams)[0]);
          // Register lists channels by name.
          streams.sort((a, b) => a.name.localeCompare(b.name));
        }
        if (e.op === 'delete') {
          const gone = new Set(e.stream_ids as number[]);
          state.streams = streams.filter((s) => !gone.has(s.stream_id));
        }
        break;
      }
      default:
        break;
    }
  }
}
