/**
 * The controller's channel management (controller.ts keeps the methods, each a call into this
 * module): joining, creating, members, name and description, privacy, leaving. Only the channel
 * dialogs, Jump and the menus use them, after the first screen: a chunk loaded with the dialogs
 * (lazy-dialogs.ts), or on a method's first call.
 */
import { effect } from '@preact/signals';
import type { ConfabClient } from '../../src/client/api.js';
import { type Privacy } from '../state/channel-settings.js';
import {
  privacyChangeText,
  privacyLabel,
  privacyOf,
  privacyParams,
} from '../state/channel-forms.js';
import type { ChatState } from '../state/chat.js';
import { channelNarrow } from '../state/narrow.js';
import type { Controller } from './controller.js';

/** How long a channel just joined (or created) may take to come in the events. */
const JOIN_WAIT_MS = 10_000;

/**
 * Joins a channel by name, creating it when there is none of that name (the API's subscribe
 * does, the organization permitting), and shows it once the server's events have brought it.
 */
export async function joinChannel(c: Controller, name: string): Promise<void> {
  const s = c.state.value;
  if (!s) return;
  try {
    await c.client.subscribe([name]);
  } catch (e) {
    c.toast(e instanceof Error ? e.message : String(e));
    return;
  }
  const id = await subscribedTo(s, name);
  if (id !== undefined && c.state.value === s) c.go(channelNarrow(id));
}

/**
 * The channel of this name once the events have brought the user's subscription to it (or,
 * `subscribed` false, the channel).
 */
async function subscribedTo(
  s: ChatState,
  name: string,
  subscribed = true,
): Promise<number | undefined> {
  const joined = () => {
    const ch = s.channelByName(name);
    return ch && (!subscribed || s.subs.has(ch.stream_id)) ? ch.stream_id : undefined;
  };
  const id = await new Promise<number | undefined>((resolve) => {
    let stop: (() => void) | null = null;
    const limit = setTimeout(() => {
      stop?.();
      resolve(joined());
    }, JOIN_WAIT_MS);
    stop = effect(() => {
      void s.rev.channels.value;
      const id = joined();
      if (id === undefined) return;
      clearTimeout(limit);
      resolve(id);
      queueMicrotask(() => stop?.());
    });
  });
  return id;
}

/**
 * Creates a channel (`POST /users/me/subscriptions` with its settings and people) and, once the
 * events have brought it, closes the dialog and shows it. The server's refusal is returned (the
 * dialog shows it), null when done.
 */
export async function createChannel(
  c: Controller,
  p: Parameters<ConfabClient['createChannel']>[0],
): Promise<string | null> {
  const s = c.state.value;
  if (!s) return 'Not connected.';
  try {
    await c.client.createChannel(p);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  // Created without the user in it: a public one is shown once known; a private one cannot be.
  const withSelf = p.principals?.includes(s.selfId) ?? true;
  const id = withSelf || !p.invite_only ? await subscribedTo(s, p.name, withSelf) : undefined;
  if (c.state.value !== s) return null;
  if (c.dialog.value?.kind === 'create-channel') c.dialog.value = null;
  if (id !== undefined) c.go(channelNarrow(id));
  else c.toast(`Created #${p.name}.`, 'info');
  return null;
}

/** A channel's members, fetched once (then kept by the events: ChatState.members). */
export async function loadMembers(c: Controller, streamId: number): Promise<void> {
  const s = c.state.value;
  if (!s || !s.members.shouldFetch(streamId)) return;
  try {
    const r = await c.client.channelMembers(streamId);
    s.members.fetched(streamId, r.subscribers);
  } catch (e) {
    s.members.failed(streamId);
    c.toast(`Could not load the channel's members: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Subscribes people to a channel; the server's refusal is returned, null when done. */
export async function addMembers(
  c: Controller,
  streamId: number,
  userIds: number[],
): Promise<string | null> {
  const ch = c.state.value?.channels.get(streamId);
  if (!ch) return 'This channel is gone.';
  try {
    await c.client.addSubscribers(ch.name, userIds);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Unsubscribes someone from a channel, after a confirmation; the server's refusal is
 * returned (null when done, or not confirmed).
 */
export async function removeMember(
  c: Controller,
  streamId: number,
  userId: number,
): Promise<string | null> {
  const s = c.state.value;
  const ch = s?.channels.get(streamId);
  if (!s || !ch) return 'This channel is gone.';
  const who = s.userName(userId);
  const ok = await c.ask({
    title: `Remove ${who} from #${ch.name}?`,
    text: ch.invite_only
      ? `${who} will no longer see this private channel, and will need to be added again.`
      : `${who} will no longer receive its messages.`,
    action: 'Remove',
    danger: true,
  });
  if (!ok) return null;
  try {
    await c.client.unsubscribe([ch.name], [userId]);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** Changes a channel's description or name; the server's refusal is returned. */
export async function updateChannel(
  c: Controller,
  streamId: number,
  p: {
    description?: string;
    new_name?: string;
    is_private?: boolean;
    history_public_to_subscribers?: boolean;
  },
): Promise<string | null> {
  try {
    await c.client.updateChannel(streamId, p);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Changes a channel's privacy after a confirmation saying what it does (privacyChangeText); the
 * change shows with the server's events. `done`: confirmed and accepted; `error`: the
 * server's refusal in its words.
 */
export async function changePrivacy(
  c: Controller,
  streamId: number,
  to: Privacy,
): Promise<{ done: boolean; error: string | null }> {
  const ch = c.state.value?.channels.get(streamId);
  const text = ch ? privacyChangeText(privacyOf(ch), to) : null;
  if (!ch || text === null) return { done: false, error: null };
  const ok = await c.ask({
    title: `Change #${ch.name} to “${privacyLabel(to)}”?`,
    text,
    action: 'Change privacy',
    danger: to === 'public' || !ch.invite_only,
  });
  if (!ok) return { done: false, error: null };
  const p = privacyParams(to);
  const error = await updateChannel(c, streamId, {
    is_private: p.invite_only,
    history_public_to_subscribers: p.history_public_to_subscribers,
  });
  return { done: error === null, error };
}

/**
 * Leaves a channel (a private one only after a confirmation, in the app's dialog: one cannot
 * join it again without an invitation). Its view stays, the sidebar entry goes with the server's event.
 */
export async function leaveChannel(c: Controller, streamId: number): Promise<void> {
  const ch = c.state.value?.channels.get(streamId);
  if (!ch) return;
  if (
    ch.invite_only &&
    !(await c.ask({
      title: `Leave #${ch.name}?`,
      text: 'It is a private channel: you will need an invitation to join it again.',
      action: 'Leave',
      danger: true,
    }))
  )
    return;
  try {
    await c.client.unsubscribe([ch.name]);
  } catch (e) {
    c.toast(e instanceof Error ? e.message : String(e));
  }
}

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
