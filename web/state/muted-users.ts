/**
 * Muted users, as the reference's web app treats them (muted_users.ts, people.ts
 * get_display_full_name, typing_events.ts): register's `muted_users` and the `muted_users`
 * event (the whole list each time) give who the user muted and when. A muted user's messages
 * show collapsed (the sender's name and avatar left out) until revealed one by one; they make no
 * desktop notification or sound (the server also marks them read); the user does not see them
 * typing; their reactions still count, their name in a reaction's tooltip reads "Muted user".
 * Anyone but oneself can be muted (bots too, as the reference's user card offers).
 *
 * The lists leave them out as the reference's do (buddy_data.ts, pm_conversations.ts,
 * composebox_typeahead.ts; the help page "Mute a user"): the people list; the direct-message
 * conversations whose other members are all muted (a group with someone else stays, the muted
 * named "Muted user"; the conversation being viewed stays too); the compose box's suggestions for
 * mentions and recipients, unless the query names the person exactly by `Name|id`. Settings and
 * channel administration (the channel's member picker, the Users panel) still show them. The
 * server leaves them out of read receipts both ways (muted by, or muting, the viewer).
 *
 * Beyond the lists (message_list_data.ts, message_store.get_pm_full_names, compose_ui.ts): a
 * one-on-one conversation with a muted user is left out of every view but its own (All messages,
 * Direct messages, a search; drawnForMutes); a direct message's header names them "Muted user"
 * (its own view's too); the jump dialog offers them only when named exactly (`Name|id`), as the
 * recipient suggestions do. The compose box's placeholder and recipient pills keep their name
 * (the reference's placeholder does: whoever is written to was chosen by name).
 */

export type MutedUser = { id: number; timestamp: number };

/** What a muted user's hidden message says instead of its content. */
export const HIDDEN_NOTE = 'This message was hidden because you muted the sender.';

/** The name shown for a muted user where their name would be (reactions' tooltips). */
export const MUTED_NAME = 'Muted user';

/** What the confirmation before muting says muting does. */
export function muteExplained(name: string): string {
  return (
    `${name}'s messages will be hidden behind a notice you can open one at a time, and will ` +
    `not notify you or make a sound; they are marked as read. ${name} will be left out of the ` +
    'people list, your direct message conversations and the suggestions as you write, and will ' +
    `not see whether you read their messages. You will not see ${name} typing, and their ` +
    'reactions will count without their name. You can unmute them at any time from ' +
    'Settings → Muted users.'
  );
}

export class MutedUsers {
  private readonly byId = new Map<number, number>();

  constructor(list: readonly MutedUser[] | undefined = []) {
    this.set(list);
  }

  /** The whole list, as the register snapshot and each event give it. */
  set(list: readonly MutedUser[]): void {
    this.byId.clear();
    for (const m of list) this.byId.set(m.id, m.timestamp);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  /** When the user muted `id` (UNIX seconds), or undefined. */
  since(id: number): number | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  list(): MutedUser[] {
    return [...this.byId].map(([id, timestamp]) => ({ id, timestamp }));
  }
}

/** Whether the card offers muting (or unmuting) this person: anyone but oneself. */
export function canMute(selfId: number, userId: number): boolean {
  return userId !== selfId;
}

/** The names a reaction's tooltip lists: "You", "Muted user", or the person's name. */
export function reactionNames(
  userIds: readonly number[],
  selfId: number,
  muted: MutedUsers,
  name: (id: number) => string,
): string[] {
  return userIds.map((id) => (id === selfId ? 'You' : muted.has(id) ? MUTED_NAME : name(id)));
}

/** Who is shown typing: the muted left out. */
export function withoutMuted(ids: readonly number[], muted: MutedUsers): number[] {
  return ids.filter((id) => !muted.has(id));
}

/** Whether a message shows collapsed (the user's own never: nobody mutes themselves). */
export function hiddenMessage(senderId: number, selfId: number, muted: MutedUsers): boolean {
  return senderId !== selfId && muted.has(senderId);
}

/** Who a user is in a conversation list: "Muted user" when muted, else their name. */
export function listedName(id: number, muted: MutedUsers, name: (id: number) => string): string {
  return muted.has(id) ? MUTED_NAME : name(id);
}

/**
 * The direct-message conversations a list shows (keys: the other members' ids, "4,7"): those
 * with someone not muted. A one-on-one conversation with a muted user, or a group of muted users
 * only, is left out, unless `isCurrent` (the conversation being viewed).
 */
export function listedDms<T>(
  dms: readonly (readonly [string, T])[],
  muted: MutedUsers,
  isCurrent: (key: string) => boolean = () => false,
): (readonly [string, T])[] {
  if (muted.size === 0) return [...dms];
  return dms.filter(
    ([key]) => isCurrent(key) || !key.split(',').every((id) => muted.has(Number(id))),
  );
}

/**
 * Whether a view draws a message as far as muted users go (the reference's
 * messages_filtered_for_user_mutes; the help page: direct messages between you and a muted user
 * are left out of every view, search included, but their own). `dmIds`: a direct message's
 * other members (its conversation key, [self] for one's own), null for a channel's message;
 * `oneOnOne`: whether the view is a conversation with one person (`dm:<id>`), which shows
 * everything. A one-on-one message with someone muted, sent by either, is left out; a group's
 * messages stay (the muted sender's collapsed, hiddenMessage), as do channels'.
 */
export function drawnForMutes(
  dmIds: readonly number[] | null,
  muted: MutedUsers,
  oneOnOne: boolean,
): boolean {
  if (oneOnOne || dmIds === null || dmIds.length !== 1) return true;
  return !muted.has(dmIds[0]!);
}

/** A direct-message conversation's other members as its header names them ("Muted user"). */
export function listedNames(
  ids: readonly number[],
  muted: MutedUsers,
  name: (id: number) => string,
): string {
  return ids.map((id) => listedName(id, muted, name)).join(', ');
}

export type MutedRow = { id: number; name: string; since: number };

/**
 * The Muted users panel's rows: those whose name (or e-mail) holds the filter, any case, by name
 * (then id); a user the app does not know shows by `name`'s fallback.
 */
export function mutedRows(
  muted: MutedUsers,
  person: (id: number) => { name: string; email?: string | undefined },
  filter: string,
): MutedRow[] {
  const q = filter.trim().toLowerCase();
  const rows: (MutedRow & { email: string })[] = muted.list().map((m) => {
    const p = person(m.id);
    return { id: m.id, name: p.name, email: p.email ?? '', since: m.timestamp };
  });
  return rows
    .filter(
      (r) => q === '' || r.name.toLowerCase().includes(q) || r.email.toLowerCase().includes(q),
    )
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id)
    .map(({ id, name, since }) => ({ id, name, since }));
}
