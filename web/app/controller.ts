/**
 * The app's controller: the one place where the typed client (src/client), the state modules
 * (web/state) and the browser meet. It registers the event queue and keeps it live, routes the
 * URL's fragment to a narrow (back/forward work), opens message lists, sends (with local echo),
 * marks what was seen as read in batches, shows notifications, keeps the title, reports presence
 * and fetches everyone's (the only timer an idle tab runs, at the server's presence interval;
 * the status active or idle by the user's input: state/presence.ts), and logs out. Views read
 * its signals and call its methods; they never call the network themselves.
 */
import { batch, signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { ApiError, ConfabClient, type UploadTransport } from '../../src/client/api.js';
import {
  EventStream,
  type SocketLike,
  type StreamStatus,
  type Transport,
} from '../../src/client/events.js';
import type { Message, RegisterResponse, ServerEvent, User } from '../../src/client/types.js';
import { NO_POST_PERMISSION, type Privacy } from '../state/channel-settings.js';
import { ChatState, TOPIC, type StoredMessage } from '../state/chat.js';
import { EVENT_TYPES, FETCH_TYPES, REGISTER_PARAMS } from '../state/register.js';
import { Drafts, type DraftTo } from '../state/drafts.js';
import { DraftSync, type DraftsEvent, type ServerDraft } from '../state/drafts-sync.js';
import {
  ScheduledMessages,
  type ScheduledEvent,
  type ScheduledMessage,
} from '../state/scheduled-store.js';
import type { EmojiEntry } from '../state/autocomplete.js';
import type { EmojiIndex } from '../state/emoji.js';
import { Loader } from '../state/loader.js';
import type { RowTarget } from '../state/inbox.js';
import { RECENT_BATCH } from '../state/recent.js';
import { unmutePolicy } from '../state/muting.js';
import type { MessageList } from '../state/message-list.js';
import {
  ALL,
  apiNarrow,
  channelOf,
  composeKeyChannel,
  dmNarrow,
  dmOf,
  isConversation,
  matches,
  messageDmIds,
  messageHash,
  mutingApplies,
  narrowAfterMove,
  narrowHash,
  parseHash,
  placementInView,
  PROPAGATE_FOR,
  sameNarrow,
  sameTopic,
  senderNarrow,
  senderOf,
  topicMove,
  topicNarrow,
  topicOf,
  type PropagateMode,
  type TopicMove,
  type Narrow,
} from '../state/narrow.js';
import { pageTitle, shouldNotify, shouldSound, type NotifyContext } from '../state/notify.js';
import { Activity } from '../state/presence.js';
import { TypingSender, typingKey, type TypingTo } from '../state/typing.js';
import { listedNames, muteExplained, withoutMuted } from '../state/muted-users.js';
import { nextUnread } from '../state/unread.js';
import type { HistoryEntry } from '../state/message-menu.js';
import { htmlText, plainHtml } from './format.js';
import { giveFocusBack } from './focus-back.js';
import { nextFrame } from './frame.js';
import { settingsForApp } from './server-settings.js';
import { setTheme } from './theme.js';
import { track } from './track.js';

export type Session = { userId: number; email: string; csrfToken: string };

/** Where the compose box sends. */
export type ComposeTo =
  { kind: 'stream'; streamId: number | null; topic: string } | { kind: 'dm'; userIds: number[] };

/**
 * A view of the app's own that is not a narrow of messages (its own fragment: #scheduled,
 * #drafts, #recent, #inbox).
 */
export type Page = 'scheduled' | 'drafts' | 'recent' | 'inbox';

/** The fragments of the pages (`#recent_topics`: the reference's older name of Recent). */
const PAGE_HASH = /^#(scheduled|drafts|recent|recent_topics|inbox)\/?$/;

/**
 * Where this browser keeps the user's home view (web_home_view) as last seen, for the next load:
 * the code of the view the page opens on is fetched beside the data, before it says which view
 * that is (main.tsx, shell.tsx loadViewSoon).
 */
export const HOME_VIEW_STORE = 'confab.home-view';

/** A message to send, as POST /messages takes it. */
function wireMessage(to: ComposeTo, content: string) {
  return to.kind === 'dm'
    ? { type: 'direct' as const, to: to.userIds, content }
    : { type: 'stream' as const, to: to.streamId!, topic: to.topic, content };
}

/** The page of the user's home view (web_home_view): the Inbox, Recent conversations, or none (All messages). */
function homePage(s: ChatState): Page | undefined {
  const home = s.settings.web_home_view;
  return home === 'recent_topics' ? 'recent' : home === 'inbox' ? 'inbox' : undefined;
}

export type Toast = { id: number; text: string; kind: 'error' | 'info' };

export type Dialog =
  | { kind: 'jump' }
  | { kind: 'settings'; panel: string }
  /** The "Create channel" dialog, its name filled in (from Jump's "Create channel #name"). */
  | { kind: 'create-channel'; name: string }
  | { kind: 'channel-settings'; streamId: number }
  /** Setting one's own status (status.tsx). */
  | { kind: 'status' }
  /** A message's versions, who has read it, its Markdown (message-dialogs.tsx). */
  | { kind: 'message-history'; id: number }
  | { kind: 'read-receipts'; id: number }
  | { kind: 'message-source'; id: number }
  /** A topic's Move (or Rename) dialog, from its menu (move-topic.tsx). */
  | { kind: 'move-topic'; streamId: number; topic: string; rename: boolean }
  /** The keyboard shortcuts (the `?` key: shortcuts.tsx). */
  | { kind: 'shortcuts' }
  | null;

/**
 * A person's profile card, or a user group's card (profile-card.tsx): whose, and the box of what
 * opened it (the card is drawn beside it on a wide screen).
 */
export type CardAt = ({ userId: number } | { groupId: number }) & {
  anchor: { left: number; top: number; right: number; bottom: number } | null;
  /** What opened it: while it is in the page, the card follows it when the window is resized. */
  from?: Element | null;
};

/**
 * A question for the confirmation dialog (confirm.tsx): `danger` for an action that destroys;
 * `extra`, choices drawn under the text (the asker reads what was chosen once it is answered).
 */
export type Ask = {
  title: string;
  text: string;
  action: string;
  danger?: boolean;
  extra?: ComponentChildren;
};
export type Question = Ask & { id: number };

/** The browser's upload with progress (fetch reports none). */
export const xhrUpload: UploadTransport = (req) =>
  new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', req.url);
    for (const [k, v] of Object.entries(req.headers)) x.setRequestHeader(k, v);
    x.upload.onprogress = (e) => req.onProgress?.(e.loaded, e.total);
    x.onload = () =>
      resolve({
        status: x.status,
        text: x.responseText,
        retryAfter: x.getResponseHeader('Retry-After'),
      });
    x.onerror = () => reject(new Error('upload failed'));
    x.onabort = () => reject(new Error('upload cancelled'));
    req.signal?.addEventListener('abort', () => x.abort());
    x.send(req.body);
  });

const MARK_READ_DELAY_MS = 400;
/**
 * What a channel the app does not know is called (a link to a private channel one is not in,
 * one that was left or archived), rather than "#unknown".
 */
export const UNKNOWN_CHANNEL = 'Unknown channel';

/**
 * A send not answered in this time is shown as not sent, with "Try again": a server that froze,
 * or a network that drops everything, would leave it "Sending…" for ever.
 */
const SEND_TIMEOUT_MS = 15_000;

/**
 * The controller's code that only what is loaded after the first screen uses (dialogs, menus,
 * the message list): modules of their own, fetched with those pieces (lazy-dialogs.ts,
 * lazy-messages.ts) or at a method's first call, which awaits it. docs/web.md, "Budgets".
 */
const channelOps = () => import('./controller-channels.js');
const messageOps = () => import('./controller-messages.js');
/** What a method whose module could not be fetched says (offline, or a new build's server). */
const PART_FAILED =
  'Could not load a part of the app. Check the connection, or reload the page if the server was updated.';

export class Controller {
  readonly client: ConfabClient;
  readonly session: Session;
  readonly state = signal<ChatState | null>(null);
  readonly status = signal<StreamStatus>('registering');
  readonly transport = signal<Transport>(null);
  readonly narrow = signal<Narrow>(ALL);
  /** A view shown in place of the messages (the scheduled messages, the drafts), or null. */
  readonly page = signal<Page | null>(null);
  /**
   * The Recent conversations view's own fetch of the newest messages (recent.ts): not asked yet,
   * on its way (first, or older ones), failed, or done.
   */
  readonly recentFetch = signal<'none' | 'loading' | 'failed' | 'done'>('none');
  /** The user's scheduled messages (register's snapshot, kept by `scheduled_messages` events). */
  readonly scheduled = new ScheduledMessages();
  /** The scheduled message the compose box holds for editing: sending it changes that one. */
  readonly editingScheduled = signal<number | null>(null);
  /** The notice of a message just scheduled ("Scheduled for …", with a link to the view). */
  readonly scheduledNotice = signal<{ timestamp: number } | null>(null);
  readonly list = signal<MessageList | null>(null);
  readonly drawer = signal(false);
  readonly dialog = signal<Dialog>(null);
  readonly toasts = signal<Toast[]>([]);
  /** The question the confirmation dialog asks (one at a time). */
  readonly question = signal<Question | null>(null);
  private answerQuestion: ((ok: boolean) => void) | null = null;
  /** Where the focus was when the question was asked: it goes back there after. */
  private focusBefore: HTMLElement | null = null;
  /** A request for the compose box (reply, new topic), with a counter so repeats register. */
  readonly composeRequest = signal<{
    to: ComposeTo;
    quote?: string;
    /** The text is not the conversation's draft (a scheduled message being edited). */
    notDraft?: boolean;
    seq: number;
  } | null>(null);
  /** The last topic moved onward: the compose box follows it when addressed to it. */
  readonly topicMoved = signal<TopicMove | null>(null);
  /**
   * The muted topic the last message was sent to (its channel muted, or itself), for the notice
   * above the compose box with "Unmute topic" (the reference's unmute banner): All messages leaves
   * it out, so the message would seem lost. Cleared by another view, another send, or closing.
   */
  readonly sentToMuted = signal<{ streamId: number; topic: string } | null>(null);
  /**
   * The conversation the last message was sent to when the view does not show it (`x` to a
   * direct message over a channel's view, say), for the notice above the compose box with a link
   * there, as the reference's "Sent! Your message is outside your current view." Cleared as
   * sentToMuted is (which says it for a muted topic instead).
   */
  readonly sentOutside = signal<Narrow | null>(null);
  /**
   * The row focused in the Inbox: what the closed compose box's first button says and where it
   * opens the box (state/inbox.ts inboxRowTarget); null elsewhere (the standard words).
   */
  readonly rowTarget = signal<RowTarget | null>(null);
  readonly selected = signal<number | null>(null);
  /** The message being edited in place. */
  readonly editing = signal<number | null>(null);
  /**
   * Seeing a message marks it read no more, after "Mark as unread from here" (as the reference
   * stops reading in that view), until the user scrolls, selects, or shows a view again.
   */
  readonly readsPaused = signal(false);
  /** The emoji picker, where it opens and what a choice does. */
  readonly picker = signal<{
    x: number;
    y: number;
    title: string;
    onPick: (e: EmojiEntry) => void;
  } | null>(null);
  readonly emoji = signal<EmojiIndex | null>(null);
  /**
   * Whether `emoji` lacks the server's emoji (their file could not be fetched: the realm's own
   * only, so that the picker shows what there is rather than "Loading…"); loadEmoji tries again.
   */
  emojiPartial = false;
  /** The profile card open (one at a time). */
  readonly card = signal<CardAt | null>(null);
  /** The compose box's upload, for files dropped anywhere on the messages. */
  dropFiles: ((files: File[]) => void) | null = null;
  /** Set when the message list should open at this message (a `near` link). */
  near: number | null = null;
  readonly focused = signal(typeof document !== 'undefined' ? document.hasFocus() : true);
  serverSettings: Record<string, unknown> = {};
  me: User | null = null;
  /** The first snapshot, while `me` is on its way; events that arrive before it is applied. */
  private firstRegister: RegisterResponse | null = null;
  private early: ServerEvent[] = [];
  private title = '';
  private titleFrame = false;
  private permission: NotificationPermission | null = null;
  private audio: AudioContext | null = null;
  stream: EventStream | null = null;
  loader: Loader | null = null;
  drafts: Drafts | null = null;
  /** The drafts' copies on the server, while the user's enable_drafts_synchronization is on. */
  private draftSync: DraftSync | null = null;
  typingSender: TypingSender | null = null;

  private readonly onLoggedOut: () => void;
  private pendingRead = new Set<number>();
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  private presenceTimer: ReturnType<typeof setInterval> | null = null;
  /** Whether the user is at this page (the status its presence reports). */
  private readonly activity = new Activity(
    Date.now(),
    typeof document !== 'undefined' ? document.hasFocus() : true,
  );
  private toastSeq = 0;
  private questionSeq = 0;
  private composeSeq = 0;
  /** goAndCompose's request, for the routing of its navigation (route). */
  private composeAfterRoute: { to: ComposeTo; quote?: string; notDraft: boolean } | null = null;
  /** Sends not confirmed yet, by local id; `failed` once shown as not sent. */
  private readonly unsent = new Map<string, { to: ComposeTo; content: string; failed?: boolean }>();
  private emojiLoading: Promise<void> | null = null;
  private readonly listeners: [EventTarget, string, EventListener][] = [];

  constructor(session: Session, onLoggedOut: () => void) {
    this.session = session;
    this.onLoggedOut = onLoggedOut;
    this.client = new ConfabClient({
      baseUrl: location.origin,
      auth: { kind: 'session', csrfToken: session.csrfToken },
      fetch: (url, init) => fetch(url, init),
      upload: xhrUpload,
    });
  }

  // ---- Start and stop ----------------------------------------------------------------------

  async start(): Promise<void> {
    this.on(window, 'hashchange', () => this.route());
    this.on(window, 'focus', () => {
      this.focused.value = true;
      this.permission = null;
      this.userActive(false);
    });
    // Input keeps the user active (a number set: no work, no timer).
    for (const type of ['keydown', 'pointerdown', 'pointermove', 'wheel', 'touchstart'])
      this.on(window, type, () => this.userActive(true));
    this.on(window, 'blur', () => (this.focused.value = false));
    this.on(window, 'online', () => this.stream?.reconnectNow());
    this.on(document, 'visibilitychange', () => {
      if (document.visibilityState === 'visible') {
        this.stream?.reconnectNow();
        this.userActive(false);
      }
    });
    this.on(window, 'pagehide', () => this.stream?.stop({ deleteQueue: true }));
    // The login form's answer when it opened the app (server-settings.ts).
    settingsForApp()
      .then((s) => (this.serverSettings = s))
      .catch(() => undefined);
    // The user's own fields (register's snapshot leaves out the realm's users: FETCH_TYPES),
    // asked for beside the registration; the snapshot waits for them (and events that come
    // first wait for the snapshot).
    const me = this.client.request<User>('GET', '/users/me').then((u) => {
      this.me = u;
      const first = this.firstRegister;
      this.firstRegister = null;
      if (first) this.onRegister(first, false);
    });
    this.stream = new EventStream({
      client: this.client,
      register: { ...REGISTER_PARAMS, event_types: EVENT_TYPES, fetch_event_types: FETCH_TYPES },
      openSocket:
        typeof WebSocket === 'undefined'
          ? null
          : (url, protocol) => new WebSocket(url, protocol) as unknown as SocketLike,
      onRegister: (r, again) => {
        if (this.me) this.onRegister(r, again);
        else this.firstRegister = r;
      },
      onEvents: (events) => {
        if (this.state.value) this.onEvents(events);
        else this.early.push(...events);
      },
      onStatus: (s, t) =>
        batch(() => {
          this.status.value = s;
          this.transport.value = t;
        }),
      onFatal: (e) => this.onFatal(e),
    });
    try {
      await Promise.all([me, this.stream.start()]);
    } catch (e) {
      // Back to the login form: nothing of this attempt keeps running.
      this.stopLocal();
      throw e;
    }
  }

  private on(target: EventTarget, type: string, fn: EventListener): void {
    target.addEventListener(type, fn);
    this.listeners.push([target, type, fn]);
  }

  private stopLocal(): void {
    this.stream?.stop({ deleteQueue: true });
    for (const [t, type, fn] of this.listeners) t.removeEventListener(type, fn);
    this.listeners.length = 0;
    if (this.presenceTimer !== null) clearInterval(this.presenceTimer);
    this.presenceTimer = null;
    if (this.readTimer !== null) clearTimeout(this.readTimer);
    this.typingSender?.stop();
    this.draftSync?.stop();
  }

  async logout(): Promise<void> {
    this.stopLocal();
    try {
      await this.client.logout();
    } catch {
      // the session is gone either way for this page
    }
    // The next login (perhaps someone else's) starts at the app's start, not in this user's
    // settings or view. A session that expired keeps its address: logging in again returns.
    history.replaceState(null, '', location.pathname + location.search);
    this.onLoggedOut();
  }

  private onFatal(e: Error): void {
    this.stopLocal();
    if (e instanceof ApiError && e.status === 401) this.onLoggedOut();
    else this.toast(`Disconnected: ${e.message}`);
  }

  /**
   * A module of the controller's (channelOps, messageOps), or null when it cannot be fetched:
   * said in a toast (`toast`, else the method returns PART_FAILED as its refusal). A later call
   * tries again.
   */
  private async part<M>(load: () => Promise<M>, toast = true): Promise<M | null> {
    try {
      return await load();
    } catch (e) {
      console.warn('Confab: could not load a part of the app', e);
      if (toast) this.toast(PART_FAILED);
      return null;
    }
  }

  // ---- State from the server ---------------------------------------------------------------

  private onRegister(r: RegisterResponse, again: boolean): void {
    const s = new ChatState(
      r,
      {
        now: () => Date.now(),
        timers: {
          setTimeout: (fn, ms) => setTimeout(fn, ms),
          clearTimeout: (h) => clearTimeout(h as number),
        },
      },
      this.me ?? undefined,
    );
    this.loader = new Loader(s, (q) => this.client.getMessages(q));
    if (!this.drafts) {
      let storage: Storage | null;
      try {
        storage = window.localStorage;
      } catch {
        storage = null;
      }
      // The user's id from GET /users/me (s.selfId): the snapshot has no user_id, as it leaves
      // out the realm's users (FETCH_TYPES), and each user of a browser has drafts of their own.
      this.drafts = new Drafts(storage, `${s.selfId}@${location.host}`, () => Date.now());
      const sync = new DraftSync(
        this.drafts,
        {
          create: (d) =>
            this.client
              .request<{ ids: number[] }>('POST', '/drafts', { drafts: [d] })
              .then((r) => r.ids[0]!),
          edit: (id, d) => this.client.request('PATCH', `/drafts/${id}`, { draft: d }).then(),
          remove: (id) => this.client.request('DELETE', `/drafts/${id}`).then(),
        },
        {
          setTimeout: (fn, ms) => setTimeout(fn, ms),
          clearTimeout: (h) => clearTimeout(h as number),
        },
        s.selfId,
        () => this.state.value?.settings.enable_drafts_synchronization !== false,
        (to) => to.type !== 'stream' || this.state.value?.channels.has(to.streamId) === true,
      );
      this.draftSync = sync;
      this.drafts.onChange = (to) => sync.changed(to);
    }
    // Another browser's drafts (each registration's snapshot: what changed while away too).
    if (s.settings.enable_drafts_synchronization !== false)
      this.draftSync?.load((r as { drafts?: ServerDraft[] }).drafts ?? []);
    this.typingSender?.stop();
    this.typingSender = new TypingSender(
      (op, to) => void this.client.typing(op, to).catch(() => undefined),
      s.realm.typing,
      () => Date.now(),
      {
        setTimeout: (fn, ms) => setTimeout(fn, ms),
        clearTimeout: (h) => clearTimeout(h as number),
      },
      // Not to a channel the user may not post in (the server refuses it, 400), nor one the
      // app no longer knows (removed from it, or archived, while typing).
      (to) => to.type !== 'stream' || this.state.value?.canPostIn(to.stream_id) === true,
    );
    this.scheduled.reset(
      (r as { scheduled_messages?: ScheduledMessage[] }).scheduled_messages ?? [],
    );
    this.state.value = s;
    // A new state has conversations of its own: the view fetches them again when shown.
    this.recentFetch.value = 'none';
    this.applyTheme();
    if (this.emoji.value) this.emoji.value = null;
    this.route();
    if (!s.usersComplete) {
      this.client
        .users()
        .then((u) => {
          s.setUsers(u.members);
          this.updateTitle();
        })
        .catch(() => this.toast('Could not load the list of people; some names may be missing.'));
    }
    if (this.presenceTimer === null) {
      // The snapshot has everyone's presence: this first report only says the user is here.
      this.pingPresence(true);
      this.presenceTimer = setInterval(
        () => this.pingPresence(false),
        s.realm.presencePingSeconds * 1000,
      );
    }
    if (again) {
      // The new state has none of the old one's echoes: those not sent come back, as not sent.
      for (const [id, item] of [...this.unsent]) if (item.failed) this.echoUnsent(s, id);
      this.toast('Reconnected: the view was refreshed.', 'info');
    }
    if (this.early.length) {
      const early = this.early;
      this.early = [];
      this.onEvents(early);
    }
  }

  private onEvents(events: ServerEvent[]): void {
    const s = this.state.value;
    if (!s) return;
    let arrived: StoredMessage[] = [];
    const muting = s.mutingMark();
    const selected = this.selected.value;
    const selectedEcho = selected === null ? undefined : s.messages.get(selected)?.local_id;
    batch(() => {
      arrived = s.apply(events);
      // The selection on one's own message as it was echoed follows it to the server's message
      // (another id), as the reference's change_message_id: else the next j/k moved from nowhere
      // (to the newest message) and the message showed unselected.
      if (selectedEcho === undefined) return;
      for (const e of events) {
        if (e.type === 'message' && e.local_message_id === selectedEcho)
          this.selected.value = e.message.id;
      }
    });
    if (s.mutingChangedSince(muting)) this.refetchAfterMuting();
    for (const e of events) {
      // Ours, arrived (even one shown as not sent: given up on, yet taken by the server): not to
      // be shown as not sent again after a new registration.
      if (e.type === 'message' && e.local_message_id !== undefined)
        this.unsent.delete(e.local_message_id);
      if (e.type === 'user_settings' && e.property === 'color_scheme') this.applyTheme();
      if (e.type === 'realm_emoji' && this.emoji.value) this.emoji.value = null;
      if (e.type === 'scheduled_messages') this.onScheduledEvent(e as unknown as ScheduledEvent);
      if (e.type === 'drafts') this.draftSync?.onEvent(e as unknown as DraftsEvent);
    }
    if (arrived.length) {
      this.notify(arrived);
      this.sound(arrived);
    }
    for (const e of events) if (e.type === 'update_message') this.followMove(e);
    // The open channel's topics, when a move or a deletion made them go (fetched again).
    const open = channelOf(this.narrow.value);
    if (
      open !== undefined &&
      events.some((e) => e.type === 'update_message' || e.type === 'delete_message')
    )
      void this.loadTopics(open);
    // A heartbeat changes nothing: an idle tab does no work for it.
    if (events.some((e) => e.type !== 'heartbeat')) this.updateTitle();
  }

  /**
   * The combined feed shown went stale by a change of the user's muting (something unmuted, or
   * all it held muted: ChatState.mutingChanged): what muting kept out of it is only on the
   * server, so it is fetched again now, as the reference's web app does, around what the view
   * shows (the selected message, the newest when the view is there, else the window's upper
   * part, where the view keeps its top row).
   */
  private refetchAfterMuting(): void {
    const list = this.list.value;
    if (!list || !list.stale || list.loading || !mutingApplies(list.narrow)) return;
    const selected = this.selected.value;
    const shown = list.windowIds().filter((id) => Number.isInteger(id));
    const anchor =
      selected !== null && list.has(selected)
        ? selected
        : list.atNewest() || shown.length === 0
          ? 'newest'
          : shown[Math.floor(shown.length / 3)]!;
    void this.loader!.open(list, anchor);
  }

  /**
   * A topic moved onward ("this and later" or "all messages"), as the reference's app does: its
   * draft goes with it, the compose box addressed to it follows it, and so does its view when
   * the whole topic went, or the selected message, or all the view showed.
   */
  private followMove(e: Extract<ServerEvent, { type: 'update_message' }>): void {
    const s = this.state.value!;
    const mv = topicMove(e, s.messages.get(e.message_id)?.subject);
    if (!mv) return;
    const from: DraftTo = { type: 'stream', ...mv.from };
    const to: DraftTo = { type: 'stream', ...mv.to };
    const draft = this.drafts?.get(from);
    if (draft && !this.drafts!.get(to)) {
      this.drafts!.set(to, draft);
      this.drafts!.delete(from);
    }
    this.topicMoved.value = mv;
    const n = this.narrow.value;
    const next = narrowAfterMove(n, mv);
    if (!next) return;
    const selected = this.selected.value;
    const selectedMoved = selected !== null && e.message_ids.includes(selected);
    if (!mv.whole && !selectedMoved && (this.list.value?.size ?? 0) > 0) return;
    const at = { ...next, near: selectedMoved ? selected : null };
    // In place of the old topic's entry: back does not return to an empty view.
    if (this.dialog.value?.kind !== 'settings')
      history.replaceState(null, '', narrowHash(at, s.names()));
    this.show(at);
  }

  /**
   * Reports the user's presence (as the reference's web app: every ping interval, and at once
   * when an idle user comes back); unless `pingOnly`, the answer brings the presences that
   * changed since the last one, and the time by which the others are judged (offline ones go).
   */
  private pingPresence(pingOnly: boolean): void {
    const s = this.state.value;
    if (!s) return;
    this.client
      .presence(this.activity.status(Date.now()), {
        pingOnly,
        newUserInput: this.activity.newUserInput,
        lastUpdateId: pingOnly ? undefined : s.presence.lastUpdateId,
      })
      .then((r) => {
        this.activity.newUserInput = false;
        // Not into a state registered anew meanwhile (its snapshot is newer).
        if (!pingOnly && this.state.value === s) s.setPresences(r);
      })
      .catch(() => undefined);
  }

  /** Input (`input`) or the focus: an idle user who comes back is reported at once. */
  private userActive(input: boolean): void {
    if (this.activity.touch(Date.now(), input)) this.pingPresence(true);
  }

  // ---- Routing ----------------------------------------------------------------------------

  /** Shows what the location's fragment names (called on load and on every hashchange). */
  route(): void {
    const after = this.composeAfterRoute;
    this.composeAfterRoute = null;
    this.routeTo();
    if (after && this.page.peek() === null && this.state.peek())
      this.requestCompose(after.to, after.quote, after.notDraft);
  }

  private routeTo(): void {
    const s = this.state.value;
    if (!s) return;
    const hash = location.hash;
    const named = PAGE_HASH.exec(hash)?.[1];
    // No view named: the user's home view (web_home_view): the Inbox, Recent conversations or
    // All messages.
    const home = hash === '' || hash === '#';
    if (home) {
      try {
        const view = s.settings.web_home_view;
        localStorage.setItem(HOME_VIEW_STORE, typeof view === 'string' ? view : 'inbox');
      } catch {
        // no storage: the next load fetches the home view's code after the data
      }
    }
    const page = (
      named === 'recent_topics' ? 'recent' : (named ?? (home ? homePage(s) : undefined))
    ) as Page | undefined;
    if (page === 'recent' && this.recentFetch.peek() === 'none') void this.loadRecent();
    if (page) {
      batch(() => {
        if (this.dialog.value?.kind === 'settings') this.dialog.value = null;
        this.page.value = page;
        this.drawer.value = false;
        this.card.value = null;
      });
      // The messages behind it stay as they were (back returns to them as they were left).
      if (!this.list.value) this.show(ALL);
      this.updateTitle();
      return;
    }
    this.page.value = null;
    const settings = /^#settings(?:\/([\w-]+))?/.exec(hash);
    if (settings) {
      // Over the page, not over a phone's open drawer (it was drawn over it, the drawer showing
      // at its side): the drawer closes, as choosing a view from it does.
      batch(() => {
        this.dialog.value = { kind: 'settings', panel: settings[1] ?? 'account' };
        this.drawer.value = false;
      });
      if (this.list.value) return;
    } else if (this.dialog.value?.kind === 'settings') {
      this.dialog.value = null;
    }
    const n = settings ? ALL : (parseHash(hash, s.names()) ?? ALL);
    this.show(n);
  }

  /**
   * The Recent conversations view's messages (GET /messages, the newest, a batch as the
   * reference's; `older`: the batch before the oldest fetched, "Load older"). They go to the
   * view's conversations only (state/recent.ts), not to a list; events keep them from then on.
   */
  async loadRecent(older = false): Promise<void> {
    const s = this.state.value;
    if (!s || this.recentFetch.peek() === 'loading') return;
    const from = older ? s.recent.oldestFetched : null;
    if (older && (!from || s.recent.foundOldest)) return;
    this.recentFetch.value = 'loading';
    try {
      const r = await this.client.getMessages({
        anchor: from ? from.id : 'newest',
        num_before: RECENT_BATCH,
        num_after: 0,
        narrow: [],
        include_anchor: false,
      });
      // Not into a state registered anew meanwhile (it fetches its own).
      if (this.state.value !== s) return;
      s.recent.fetched(r.messages, r.found_oldest);
      this.recentFetch.value = 'done';
    } catch {
      if (this.state.value === s) this.recentFetch.value = 'failed';
    }
  }

  /**
   * Esc with nothing left to close (shell.tsx): to the user's home view (web_home_view: the
   * Inbox, Recent conversations, else All messages) unless the view shown is it already, or the user turned
   * `web_escape_navigates_to_home_view` off. False when it does not go.
   */
  goHomeOnEscape(): boolean {
    const s = this.state.value;
    if (!s || s.settings.web_escape_navigates_to_home_view === false) return false;
    const page = homePage(s);
    if (page) {
      if (this.page.value === page) return false;
      location.hash = `#${page}`;
      return true;
    }
    if (this.page.value === null && this.narrow.value.terms.length === 0) return false;
    this.go(ALL);
    return true;
  }

  /** Navigates (a new history entry; back returns). */
  go(n: Narrow): void {
    const s = this.state.value;
    if (!s) return;
    const hash = narrowHash(n, s.names());
    this.drawer.value = false;
    // An empty fragment is All messages, unless it shows a home view (Inbox, Recent conversations).
    if (location.hash === hash || (hash === '#feed' && location.hash === '' && !this.page.peek()))
      this.show(n);
    else location.hash = hash;
  }

  /** A scheduled message added, changed or gone (sent at its time, or changed in another tab). */
  private onScheduledEvent(e: ScheduledEvent): void {
    this.scheduled.apply(e);
    const editing = this.editingScheduled.peek();
    if (editing !== null && !this.scheduled.get(editing)) {
      // Sent or deleted meanwhile: the box's text is a message of its own again.
      this.editingScheduled.value = null;
      this.toast('The scheduled message you were editing was sent or deleted.', 'info');
    }
  }

  /**
   * Joins a channel by name, creating it when there is none of that name (the API's subscribe
   * does, the organization permitting), and shows it once the server's events have brought it.
   */
  async joinChannel(name: string): Promise<void> {
    await (await this.part(channelOps))?.joinChannel(this, name);
  }

  openCreateChannel(name = ''): void {
    batch(() => {
      this.dialog.value = { kind: 'create-channel', name };
      this.drawer.value = false;
    });
  }

  openChannelSettings(streamId: number): void {
    batch(() => {
      this.dialog.value = { kind: 'channel-settings', streamId };
      this.drawer.value = false;
    });
  }

  /**
   * Creates a channel (`POST /users/me/subscriptions` with its settings and people) and, once the
   * events have brought it, closes the dialog and shows it. The server's refusal is returned (the
   * dialog shows it), null when done.
   */
  async createChannel(p: Parameters<ConfabClient['createChannel']>[0]): Promise<string | null> {
    return (await this.part(channelOps, false))?.createChannel(this, p) ?? PART_FAILED;
  }

  /** A channel's members, fetched once (then kept by the events: ChatState.members). */
  async loadMembers(streamId: number): Promise<void> {
    await (await this.part(channelOps))?.loadMembers(this, streamId);
  }

  /** Subscribes people to a channel; the server's refusal is returned, null when done. */
  async addMembers(streamId: number, userIds: number[]): Promise<string | null> {
    return (await this.part(channelOps, false))?.addMembers(this, streamId, userIds) ?? PART_FAILED;
  }

  /**
   * Unsubscribes someone from a channel, after a confirmation; the server's refusal is
   * returned (null when done, or not confirmed).
   */
  async removeMember(streamId: number, userId: number): Promise<string | null> {
    return (
      (await this.part(channelOps, false))?.removeMember(this, streamId, userId) ?? PART_FAILED
    );
  }

  /** Changes a channel's description or name; the server's refusal is returned. */
  async updateChannel(
    streamId: number,
    p: {
      description?: string;
      new_name?: string;
      is_private?: boolean;
      history_public_to_subscribers?: boolean;
    },
  ): Promise<string | null> {
    return (await this.part(channelOps, false))?.updateChannel(this, streamId, p) ?? PART_FAILED;
  }

  /**
   * Changes a channel's privacy after a confirmation saying what it does (privacyChangeText); the
   * change shows with the server's events. `done`: confirmed and accepted; `error`: the
   * server's refusal in its words.
   */
  async changePrivacy(
    streamId: number,
    to: Privacy,
  ): Promise<{ done: boolean; error: string | null }> {
    const ops = await this.part(channelOps, false);
    return ops ? ops.changePrivacy(this, streamId, to) : { done: false, error: PART_FAILED };
  }

  /**
   * Leaves a channel (a private one only after a confirmation, in the app's dialog: one cannot
   * join it again without an invitation). Its view stays, the sidebar entry goes with the server's event.
   */
  async leaveChannel(streamId: number): Promise<void> {
    await (await this.part(channelOps))?.leaveChannel(this, streamId);
  }

  openSettings(panel = 'account'): void {
    location.hash = `#settings/${panel}`;
  }

  closeSettings(): void {
    const s = this.state.value;
    if (!s) return;
    history.pushState(null, '', narrowHash(this.narrow.value, s.names()));
    this.dialog.value = null;
  }

  private show(n: Narrow): void {
    const s = this.state.value!;
    const loader = this.loader!;
    const list = s.list(n);
    const another = !sameNarrow(n, this.narrow.peek());
    batch(() => {
      this.narrow.value = n;
      this.list.value = list;
      this.selected.value = n.near;
      this.readsPaused.value = false;
      // A profile card belongs to the view it was opened in (back, a link, a move: gone with it).
      this.card.value = null;
      // So does the notice of a message sent to a muted topic (the reference's banners too).
      if (another) this.sentToMuted.value = null;
      if (another) this.sentOutside.value = null;
      if (another) this.scheduledNotice.value = null;
    });
    this.near = n.near;
    const channel = channelOf(n);
    if (channel !== undefined) void this.loadTopics(channel);
    const anchor = n.near ?? 'first_unread';
    if (!list.loaded || list.stale || n.near !== null) void loader.open(list, anchor);
    this.updateTitle();
  }

  /**
   * A channel's topics for the sidebar (once; kept live by events after, and fetched again
   * when messages move in or out of it or are deleted, the list held shown until the answer).
   * One fetch at a time; its answer is taken with the messages that arrived meanwhile, and
   * asked again if messages moved meanwhile.
   */
  async loadTopics(streamId: number, force = false): Promise<void> {
    const s = this.state.value;
    if (!s || (!s.topicsToFetch(streamId) && !force) || s.topicsPending(streamId)) return;
    // Not a channel the app knows (a link to a private one, one left or archived): the server
    // answers 400, and there are no topics to show.
    if (!s.channels.has(streamId)) return;
    s.askTopics(streamId);
    try {
      const r = await this.client.topics(streamId);
      if (this.state.value === s && !s.setTopics(streamId, r.topics))
        void this.loadTopics(streamId, true);
    } catch {
      // the sidebar shows the channel without its topics
      s.topicsFailed(streamId);
    }
  }

  // ---- Reading ------------------------------------------------------------------------------

  /** Whether seeing a message in the current view marks it read (the user's setting). */
  readsOnView(): boolean {
    if (this.readsPaused.value) return false;
    const policy = this.state.value?.settings.web_mark_read_on_scroll_policy ?? 1;
    if (policy === 3) return false;
    if (policy === 2) return isConversation(this.narrow.value);
    return true;
  }

  /** Messages seen: marked read at once here, sent to the server in one batch. */
  markRead(ids: readonly number[]): void {
    const s = this.state.value;
    if (!s) return;
    const fresh = s.markReadLocally(ids.filter((id) => Number.isInteger(id)));
    if (!fresh.length) return;
    for (const id of fresh) this.pendingRead.add(id);
    this.updateTitle();
    if (this.readTimer === null)
      this.readTimer = setTimeout(() => this.flushRead(), MARK_READ_DELAY_MS);
  }

  /** The user scrolled or selected: seeing messages marks them read again. */
  resumeReading(): void {
    if (this.readsPaused.peek()) this.readsPaused.value = false;
  }

  /**
   * "Mark as unread from here": the message and every one after it in the view shown, unread
   * (the server's events bring the counts). Seeing them marks them read no more until the user
   * scrolls or selects (readsPaused).
   */
  async markUnreadFromHere(m: Message): Promise<void> {
    const s = this.state.value;
    const list = this.list.value;
    if (!s || !list) return;
    this.readsPaused.value = true;
    // The reads seen just before go first: sent after, they would mark read again what this
    // marks unread.
    if (this.readTimer !== null) clearTimeout(this.readTimer);
    this.readTimer = null;
    const seen = [...this.pendingRead];
    this.pendingRead.clear();
    try {
      if (seen.length) await this.client.updateFlags(seen, 'add', 'read');
      const { markUnreadFrom } = await messageOps();
      await markUnreadFrom(m.id, apiNarrow(list.narrow, s), (r) =>
        this.client.updateFlagsForNarrow(r),
      );
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  private flushRead(): void {
    this.readTimer = null;
    const ids = [...this.pendingRead];
    this.pendingRead.clear();
    if (!ids.length) return;
    this.client.updateFlags(ids, 'add', 'read').catch(() => {
      for (const id of ids) this.pendingRead.add(id);
      if (this.readTimer === null) this.readTimer = setTimeout(() => this.flushRead(), 5_000);
    });
  }

  /**
   * "Mark all messages as read" of the sidebar's menus: everything (after a confirmation, as the
   * reference asks), a channel, or a topic. The counts follow the server's events.
   */
  async markAllAsRead(what: { streamId?: number; topic?: string } = {}): Promise<void> {
    try {
      if (what.streamId !== undefined && what.topic !== undefined) {
        await this.client.markTopicRead(what.streamId, what.topic);
      } else if (what.streamId !== undefined) {
        await this.client.markStreamRead(what.streamId);
      } else {
        const ok = await this.ask({
          title: 'Mark all messages as read?',
          text: 'Every unread message, in all your channels and direct messages, will be marked as read.',
          action: 'Mark as read',
        });
        if (!ok) return;
        // The server stops after its time budget; what it did stays, so ask again.
        for (let i = 0; i < 10; i++) {
          const r = await this.client.markAllRead();
          if (r.complete !== false) break;
        }
      }
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * A direct-message conversation's unread messages marked read (the Inbox's row action;
   * `key`: the other participants' ids, as the unread bookkeeping keys it).
   */
  async markDmRead(key: string): Promise<void> {
    const s = this.state.value;
    if (!s) return;
    const ids = s.unread.ids((w) => w.kind === 'dm' && w.key === key);
    if (!ids.length) return;
    try {
      await this.client.updateFlags(ids, 'add', 'read');
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  markNarrowRead(): void {
    const s = this.state.value;
    if (!s) return;
    const n = this.narrow.value;
    const stream = channelOf(n);
    const topic = topicOf(n);
    const dm = dmOf(n)?.join(',');
    const ids = s.unread.ids((w) => {
      if (stream !== undefined) {
        return (
          w.kind === 'stream' &&
          w.streamId === stream &&
          (topic === undefined || w.topic.toLowerCase() === topic.toLowerCase())
        );
      }
      if (dm !== undefined) return w.kind === 'dm' && w.key === dm;
      return n.terms.length === 0;
    });
    this.markRead(ids);
  }

  // ---- Title and notifications ------------------------------------------------------------

  viewName(n: Narrow = this.narrow.value): string {
    const s = this.state.value;
    if (!s) return 'Confab';
    if (n === this.narrow.value && this.page.value === 'scheduled') return 'Scheduled messages';
    if (n === this.narrow.value && this.page.value === 'drafts') return 'Drafts';
    if (n === this.narrow.value && this.page.value === 'recent') return 'Recent conversations';
    if (n === this.narrow.value && this.page.value === 'inbox') return 'Inbox';
    const ch = channelOf(n);
    const topic = topicOf(n);
    const dm = dmOf(n);
    const search = n.terms.find((t) => t.operator === 'search')?.operand;
    if (search !== undefined) return `Search: ${search}`;
    if (ch !== undefined && !s.channels.has(ch)) return UNKNOWN_CHANNEL;
    if (ch !== undefined && topic !== undefined)
      return `#${s.channelName(ch)} > ${s.topicName(topic)}`;
    if (ch !== undefined) return `#${s.channelName(ch)}`;
    // Someone muted reads "Muted user", as the reference's title of the conversation.
    if (dm)
      return dm.length === 1 && dm[0] === s.selfId
        ? s.dmName(dm)
        : listedNames(dm, s.mutedUsers, (id) => s.userName(id));
    const sender = senderOf(n);
    if (sender !== undefined) return `Messages sent by ${s.userName(sender)}`;
    const is = n.terms.find((t) => t.operator === 'is')?.operand;
    if (is === 'mentioned') return 'Mentions';
    if (is === 'dm') return 'Direct messages';
    if (is === 'starred') return 'Starred messages';
    return 'All messages';
  }

  /** Updates the page's title at the next frame (however many changes come before it). */
  updateTitle(): void {
    if (this.titleFrame) return;
    this.titleFrame = true;
    nextFrame(() => {
      this.titleFrame = false;
      this.writeTitle();
    });
  }

  private writeTitle(): void {
    const s = this.state.value;
    if (!s) return;
    const c = s.unreadCounts();
    const title = pageTitle(c.total, this.viewName(), s.realm.name);
    // Only a change: setting the title is a round trip to the browser's own process.
    if (title !== this.title) document.title = this.title = title;
  }

  /** The browser's notification permission, read at start and when the window gets focus (the
   * getter asks the browser's process each time). */
  private notifyAllowed(): boolean {
    if (this.permission === null) {
      this.permission = typeof Notification === 'undefined' ? 'denied' : Notification.permission;
    }
    return this.permission === 'granted';
  }

  /** What the notification decisions need to know of a new message (notify.ts). */
  private notifyContext(s: ChatState, m: StoredMessage): NotifyContext {
    const seeing =
      this.focused.value &&
      document.visibilityState === 'visible' &&
      matches(this.narrow.value, m, s.matchContext(m.flags)) === true;
    return {
      selfId: s.selfId,
      settings: s.settings,
      sub: m.stream_id !== undefined ? s.subs.get(m.stream_id) : undefined,
      mutedTopic: m.type === 'stream' && s.mutedTopic(m.stream_id!, m.subject),
      senderMuted: s.mutedUsers.has(m.sender_id),
      followedTopic:
        m.type === 'stream' && s.topicPolicy(m.stream_id!, m.subject) === TOPIC.FOLLOWED,
      seeing,
    };
  }

  /**
   * One short tone for new messages that deserve it (shouldSound: the user's sound settings and
   * each channel's own), whether or not the browser shows notifications. A browser that has not
   * seen a gesture on the page yet keeps it silent.
   */
  private sound(messages: StoredMessage[]): void {
    const s = this.state.value;
    if (!s || !messages.some((m) => shouldSound(m, this.notifyContext(s, m)))) return;
    try {
      const a = (this.audio ??= new AudioContext());
      const tone = a.createOscillator();
      const gain = a.createGain();
      tone.frequency.value = 880;
      gain.gain.setValueAtTime(0.12, a.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, a.currentTime + 0.3);
      tone.connect(gain).connect(a.destination);
      tone.start();
      tone.stop(a.currentTime + 0.3);
    } catch {
      // no Web Audio here
    }
  }

  private notify(messages: StoredMessage[]): void {
    const s = this.state.value;
    if (!s || !this.notifyAllowed()) return;
    for (const m of messages) {
      const ok = shouldNotify(m, this.notifyContext(s, m));
      if (!ok) continue;
      const where =
        m.type === 'stream'
          ? `#${s.channelName(m.stream_id!)} > ${s.topicName(m.subject)}`
          : 'Direct message';
      try {
        const note = new Notification(`${m.sender_full_name} (${where})`, {
          body: htmlText(m.content).slice(0, 300),
          tag: `confab-${m.id}`,
        });
        note.onclick = () => {
          window.focus();
          this.goToMessage(m);
          note.close();
        };
      } catch {
        // some browsers allow notifications only from a service worker
      }
    }
  }

  /**
   * The narrow that opens at a message in its conversation, where the state has it now: a
   * message moved since the caller's copy of it was drawn (or notified) is found where it went.
   */
  messageNarrow(m: Message): Narrow {
    const s = this.state.value!;
    const c = s.conversationOf(s.messages.get(m.id) ?? m);
    const terms =
      c.kind === 'stream'
        ? [
            { operator: 'channel', operand: String(c.streamId), negated: false },
            { operator: 'topic', operand: c.topic, negated: false },
          ]
        : [{ operator: 'dm', operand: c.ids.join(','), negated: false }];
    return { terms, near: m.id };
  }

  goToMessage(m: Message): void {
    this.go(this.messageNarrow(m));
  }

  /** A link to a message, where it is now, that opens it for each of its readers. */
  messageLink(m: Message): string {
    const s = this.state.value!;
    return `${location.origin}/${messageHash(this.messageNarrow(m), s.names())}`;
  }

  /** Copies a link to a message (as it is in the state at the click) to the clipboard. */
  copyLink(m: Message): void {
    const s = this.state.value;
    if (!s) return;
    const url = this.messageLink(m);
    void navigator.clipboard?.writeText(url).then(
      () => this.toast('Link copied.', 'info'),
      () => this.toast('Could not copy the link.'),
    );
  }

  async requestNotifications(): Promise<NotificationPermission | 'unsupported'> {
    if (typeof Notification === 'undefined') return 'unsupported';
    const p = await Notification.requestPermission();
    this.permission = p;
    return p;
  }

  // ---- Compose and send ----------------------------------------------------------------------

  /** The compose box's default target for a narrow. */
  composeToFor(n: Narrow): ComposeTo | null {
    const dm = dmOf(n);
    if (dm) {
      // A conversation with oneself (its narrow names only oneself) is addressed to oneself.
      const others = dm.filter((id) => id !== this.session.userId);
      return { kind: 'dm', userIds: others.length ? others : dm };
    }
    const ch = channelOf(n);
    // A channel the app does not know (private and not ours, or gone): the box asks for one.
    const known = ch !== undefined && (this.state.value?.channels.has(ch) ?? true);
    if (ch !== undefined)
      return { kind: 'stream', streamId: known ? ch : null, topic: topicOf(n) ?? '' };
    return null;
  }

  draftTo(to: ComposeTo): DraftTo | null {
    if (to.kind === 'dm') return to.userIds.length ? { type: 'direct', userIds: to.userIds } : null;
    return to.streamId === null ? null : { type: 'stream', streamId: to.streamId, topic: to.topic };
  }

  typingTo(to: ComposeTo): TypingTo | null {
    if (to.kind === 'dm') return to.userIds.length ? { type: 'direct', to: to.userIds } : null;
    return to.streamId === null
      ? null
      : { type: 'stream', stream_id: to.streamId, topic: to.topic };
  }

  /** Who types in a conversation (for the indicator under the messages). */
  typingIn(to: ComposeTo | null): number[] {
    const s = this.state.value;
    const t = to && this.typingTo(to);
    if (!s || !t) return [];
    track(s.typing.rev, s.rev.muted);
    return withoutMuted(s.typing.who(typingKey(t)), s.mutedUsers);
  }

  /** Checks a message before sending; the problem in words, or null. */
  checkSend(to: ComposeTo, content: string): string | null {
    const s = this.state.value!;
    if (content.trim() === '') return 'Write a message first.';
    if (content.length > s.realm.maxMessageLength)
      return `A message can hold at most ${s.realm.maxMessageLength} characters.`;
    if (to.kind === 'dm') return to.userIds.length ? null : 'Choose who to send it to.';
    if (to.streamId === null) return 'Choose a channel.';
    if (s.channels.has(to.streamId) && !s.canPostIn(to.streamId)) return NO_POST_PERMISSION;
    if (to.topic.length > s.realm.maxTopicLength)
      return `A topic can hold at most ${s.realm.maxTopicLength} characters.`;
    if (to.topic.trim() === '' && s.realm.mandatoryTopics)
      return 'Topics are required in this organization.';
    return null;
  }

  /** Sends with a local echo (replaced by the server's message when its event arrives). */
  send(to: ComposeTo, content: string): void {
    const s = this.state.value!;
    const html = plainHtml(content);
    const localId =
      to.kind === 'dm'
        ? s.echo({ type: 'private', userIds: to.userIds, content, html })
        : s.echo({ type: 'stream', streamId: to.streamId!, topic: to.topic, content, html });
    this.unsent.set(localId, { to, content });
    this.sentToMuted.value =
      to.kind === 'stream' && s.mutedBy(to.streamId!, to.topic) !== null
        ? { streamId: to.streamId!, topic: to.topic }
        : null;
    this.sentOutside.value = this.sentToMuted.value ? null : this.outsideView(s, localId);
    this.typingSender?.stop();
    const draft = this.draftTo(to);
    if (draft) this.drafts?.delete(draft);
    this.post(localId);
  }

  /**
   * The conversation of an echoed message when the view leaves it out (null when the view shows
   * it, or cannot tell: a search, which the server judges).
   */
  private outsideView(s: ChatState, localId: string): Narrow | null {
    const id = s.echoes.get(localId);
    const m = id === undefined ? undefined : s.messages.get(id);
    if (!m || matches(this.narrow.peek(), m, s.matchContext(m.flags)) !== false) return null;
    return m.type === 'stream'
      ? topicNarrow(m.stream_id!, m.subject)
      : dmNarrow(messageDmIds(m, s.selfId), s.selfId);
  }

  /**
   * Sends without a local echo (a slash command, isSlashCommand: the server makes what it shows),
   * as the reference's, whose compose box stays sending until the server has it: the message
   * shows when the server's copy comes. Rejects with the reason it was not sent.
   */
  async sendUnechoed(to: ComposeTo, content: string): Promise<void> {
    const s = this.state.value!;
    this.typingSender?.stop();
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), SEND_TIMEOUT_MS);
    // On its way, it is no draft (the Drafts view and count leave it out); kept for a failure.
    const draft = this.draftTo(to);
    const sent = draft ? this.drafts?.sending(draft, content) : undefined;
    try {
      await this.client.sendMessage(wireMessage(to, content), {
        queue_id: this.stream?.queueId ?? undefined,
        read_by_sender: true,
        signal: ctl.signal,
      });
    } catch (e) {
      sent?.();
      const why = ctl.signal.aborted
        ? 'the server did not answer in time.'
        : e instanceof Error
          ? e.message
          : String(e);
      throw new Error(why, { cause: e });
    } finally {
      clearTimeout(timer);
    }
    this.sentToMuted.value =
      to.kind === 'stream' && s.mutedBy(to.streamId!, to.topic) !== null
        ? { streamId: to.streamId!, topic: to.topic }
        : null;
    this.sentOutside.value = null;
    // Sent: its draft goes (unless typed over meanwhile: a draft of its own then).
    if (draft && this.drafts?.get(draft) === content) this.drafts.delete(draft);
    sent?.();
  }

  private post(localId: string): void {
    const s = this.state.value!;
    const item = this.unsent.get(localId);
    if (!item) return;
    const { to, content } = item;
    const msg = wireMessage(to, content);
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), SEND_TIMEOUT_MS);
    this.client
      .sendMessage(msg, {
        queue_id: this.stream?.queueId ?? undefined,
        local_id: localId,
        read_by_sender: true,
        signal: ctl.signal,
      })
      .then(() => this.unsent.delete(localId))
      .catch((e: unknown) => {
        if (!this.unsent.has(localId)) return; // discarded meanwhile
        item.failed = true;
        const now = this.state.value;
        if (!now) return;
        // Registered anew while it was on its way: shown again in the new state.
        if (now !== s) this.echoUnsent(now, localId);
        else s.echoFailed(localId);
        const why = ctl.signal.aborted
          ? 'the server did not answer in time.'
          : e instanceof Error
            ? e.message
            : String(e);
        this.toast(`Your message was not sent: ${why}`);
      })
      .finally(() => clearTimeout(timer));
  }

  /** An unsent message echoed in state `s` (a new one), marked not sent, under a new local id. */
  private echoUnsent(s: ChatState, localId: string): void {
    const item = this.unsent.get(localId);
    if (!item) return;
    const { to, content } = item;
    const html = plainHtml(content);
    const id =
      to.kind === 'dm'
        ? s.echo({ type: 'private', userIds: to.userIds, content, html })
        : s.echo({ type: 'stream', streamId: to.streamId!, topic: to.topic, content, html });
    s.echoFailed(id);
    this.unsent.delete(localId);
    this.unsent.set(id, item);
  }

  retrySend(localId: string): void {
    // Only a failed one: "Try again" clicked twice before a drawing sends it once.
    if (!this.state.value?.echoRetrying(localId)) return;
    const item = this.unsent.get(localId);
    if (item) item.failed = false;
    this.post(localId);
  }

  dropUnsent(localId: string): { to: ComposeTo; content: string } | undefined {
    const item = this.unsent.get(localId);
    this.unsent.delete(localId);
    this.state.value?.dropEcho(localId);
    return item;
  }

  /**
   * Puts the compose box on a conversation (reply, `r`, a click on "new topic"), with `quote` as
   * its text if given: the conversation's draft then, unless `notDraft` (a scheduled message
   * loaded for editing is kept on the server already; only what is typed into it is a draft).
   */
  requestCompose(to: ComposeTo, quote?: string, notDraft = false): void {
    this.composeRequest.value = { to, quote, notDraft, seq: ++this.composeSeq };
  }

  /**
   * Opens a conversation (or channel) from a view of its own, then puts the compose box on it
   * once the box shows (hidden under the view, it could take no focus): Recent conversations'
   * `r` and `c`, a draft's Restore, a scheduled message's Edit (`quote` and `notDraft` as
   * requestCompose's).
   */
  goAndCompose(n: Narrow, to: ComposeTo, quote?: string, notDraft = false): void {
    const from = location.hash;
    this.go(n);
    if (this.page.peek() === null) {
      this.composeAfterRoute = null;
      this.requestCompose(to, quote, notDraft);
      return;
    }
    // The view leaves at the routing of this navigation (hashchange, or one on its way already:
    // a second `c` before it lands), where the box is shown as it is addressed, in the same
    // drawing. Only there: a navigation that does not happen (no new fragment) or that another
    // replaces before it lands (a view named meanwhile) drops the request; it is not left to
    // address the box at some later navigation.
    if (location.hash !== from || this.composeAfterRoute)
      this.composeAfterRoute = { to, quote, notDraft };
  }

  /**
   * A new channel message (the reference's "Start new conversation" and `c`): to the channel
   * shown, or the user's only one (composeKeyChannel), else the channel to choose; a new topic.
   * From a view of its own (the Inbox, Recent conversations) over All messages, where the box is.
   */
  startConversation(): void {
    const s = this.state.peek();
    if (!s) return;
    const page = this.page.peek();
    const streamId = composeKeyChannel(page ? null : this.narrow.peek(), [...s.subs.keys()]);
    const to: ComposeTo = { kind: 'stream', streamId, topic: '' };
    if (page) this.goAndCompose(ALL, to);
    else this.requestCompose(to);
  }

  /** A new direct message, the people to choose (the reference's "New direct message" and `x`). */
  startDirectMessage(): void {
    const to: ComposeTo = { kind: 'dm', userIds: [] };
    if (this.page.peek()) this.goAndCompose(ALL, to);
    else this.requestCompose(to);
  }

  replyTo(m: Message): void {
    const s = this.state.value!;
    // Where the message is now, not where its row was last drawn (moved since to another topic).
    const c = s.conversationOf(s.messages.get(m.id) ?? m);
    this.requestCompose(
      c.kind === 'stream'
        ? { kind: 'stream', streamId: c.streamId, topic: c.topic }
        : { kind: 'dm', userIds: c.ids.filter((id) => id !== s.selfId) },
    );
  }

  // ---- Messages: reactions, edits, deletions -----------------------------------------------

  async toggleReaction(
    m: Message,
    r: { emoji_name: string; emoji_code: string; reaction_type: string },
  ): Promise<void> {
    await (await this.part(messageOps))?.toggleReaction(this, m, r);
  }

  /**
   * "Quote and reply": the message's Markdown (asked of the server), quoted in the compose box
   * to its conversation after what the draft there had, the cursor after it.
   */
  async quote(m: Message): Promise<void> {
    await (await this.part(messageOps))?.quote(this, m);
  }

  /** A message's versions, oldest first. */
  async messageHistory(id: number): Promise<HistoryEntry[]> {
    const r = await this.client.messageHistory(id);
    return r.message_history as HistoryEntry[];
  }

  async readReceipts(id: number): Promise<number[]> {
    return (await this.client.readReceipts(id)).user_ids;
  }

  /** An event of a widget message (a vote, a new option or task, a struck task). */
  async widgetEvent(id: number, content: string): Promise<boolean> {
    try {
      await this.client.addSubmessage(id, content);
      return true;
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  async rawContent(id: number): Promise<string> {
    const r = await this.client.getMessage(id);
    return r.raw_content ?? r.message.content;
  }

  async edit(
    id: number,
    change: { content?: string; topic?: string; propagate_mode?: string },
  ): Promise<boolean> {
    try {
      await this.client.editMessage(id, change);
      return true;
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  /**
   * Which messages moving `m`'s topic takes by default, as the reference's web app chooses: by
   * where `m` is in its topic (PROPAGATE_FOR), when the view shown tells; null when it does not.
   */
  moveDefaultNow(m: StoredMessage): PropagateMode | null {
    const s = this.state.value;
    const list = this.list.value;
    if (!s || !list) return null;
    const at = placementInView(list, m, (id) => s.messages.get(id));
    return at && PROPAGATE_FOR[at];
  }

  /** The same, asking the server for `m`'s neighbours in its topic when the view does not tell. */
  async moveDefault(m: StoredMessage): Promise<PropagateMode> {
    return (await this.part(messageOps, false))?.moveDefault(this, m) ?? 'change_one';
  }

  async deleteMessage(id: number): Promise<void> {
    try {
      await this.client.deleteMessage(id);
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  async toggleStar(m: StoredMessage): Promise<void> {
    // Its flags as they are now, not as its row was last drawn (a star that came since).
    const on = (this.state.value?.messages.get(m.id) ?? m).flags.includes('starred');
    try {
      await this.client.updateFlags([m.id], on ? 'remove' : 'add', 'starred');
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  async setTopicPolicy(streamId: number, topic: string, policy: number): Promise<void> {
    try {
      await this.client.request('POST', '/user_topics', {
        stream_id: streamId,
        topic,
        visibility_policy: policy,
      });
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * One of the user's own settings of a channel they are in (colour, pinned, muted, its
   * notifications), as POST /users/me/subscriptions/properties; the change shows with the
   * server's event (this tab and the others alike). The server's refusal in its words, or null.
   */
  async setSubscriptionProperty(
    streamId: number,
    property: string,
    value: boolean | string,
  ): Promise<string | null> {
    try {
      await this.client.updateSubscription(streamId, property, value);
      return null;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }

  async pinChannel(streamId: number, pinned: boolean): Promise<void> {
    const failed = await this.setSubscriptionProperty(streamId, 'pin_to_top', pinned);
    if (failed) this.toast(failed);
  }

  /** "Unmute topic" of the notice of a message sent to a muted topic (muting.ts unmutePolicy). */
  unmuteSentTo(streamId: number, topic: string): void {
    const s = this.state.value;
    if (!s) return;
    void this.setTopicPolicy(streamId, topic, unmutePolicy(s.channelMuted(streamId)));
  }

  async setChannelMuted(streamId: number, muted: boolean): Promise<void> {
    try {
      await this.client.updateSubscription(streamId, 'is_muted', muted);
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  // ---- People ---------------------------------------------------------------------------

  /** Opens a person's profile card beside `anchor` (what was clicked or focused), if given. */
  openCard(userId: number, anchor?: Element | null): void {
    this.card.value = { userId, anchor: box(anchor), from: anchor ?? null };
  }

  /** Opens a user group's card (its members, each opening theirs) beside `anchor`, if given. */
  openGroupCard(groupId: number, anchor?: Element | null): void {
    this.card.value = { groupId, anchor: box(anchor), from: anchor ?? null };
  }

  /**
   * "Send direct message" of a profile card: the conversation with that person (with oneself,
   * for one's own card, as the reference), and the compose box addressed to it, focused.
   */
  messagePerson(userId: number): void {
    const s = this.state.value;
    if (!s) return;
    this.card.value = null;
    this.go(dmNarrow([userId], s.selfId));
    this.requestCompose({ kind: 'dm', userIds: [userId] });
  }

  /** "View messages sent" of a profile card: the narrow of that person's messages. */
  viewSentBy(userId: number): void {
    this.card.value = null;
    this.go(senderNarrow(userId));
  }

  /**
   * "Mute this user" (after saying what muting does) or "Unmute this user": the list comes back
   * as the `muted_users` event. True when done; a refusal is a toast.
   */
  async setUserMuted(userId: number, mute: boolean): Promise<boolean> {
    const s = this.state.value;
    if (!s) return false;
    const name = s.userName(userId);
    if (
      mute &&
      !(await this.ask({ title: `Mute ${name}?`, text: muteExplained(name), action: 'Mute' }))
    )
      return false;
    try {
      await this.client.request(mute ? 'POST' : 'DELETE', `/users/me/muted_users/${userId}`, {});
      return true;
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  // ---- Emoji -----------------------------------------------------------------------------

  /**
   * The emoji index (the server's data file, fetched the first time it is needed, and again at
   * the next need after it could not be: a picker opened again, the status dialog).
   */
  loadEmoji(): Promise<void> {
    const s = this.state.value;
    if (!s) return Promise.resolve();
    if (this.emoji.value && !this.emojiPartial) return Promise.resolve();
    this.emojiLoading ??= (async () => {
      // The index's code comes with the message list's (controller-messages.ts), fetched beside
      // the data; if it cannot be, a toast says so and the next call tries again.
      const code = this.part(messageOps);
      let data: Record<string, string[]> = {};
      let partial = false;
      try {
        if (s.realm.emojiDataUrl) {
          // From this origin, whatever host the server names (the page may only connect here).
          const u = new URL(s.realm.emojiDataUrl, location.origin);
          data = (await this.client.emojiData(location.origin + u.pathname + u.search))
            .code_to_names;
        }
      } catch {
        this.toast('Could not load the emoji list.');
        partial = true;
      }
      const ops = await code;
      // Not over a whole index (an earlier try's answer) with a partial one.
      if (ops && !(partial && this.emoji.value)) {
        this.emojiPartial = partial;
        this.emoji.value = ops.buildEmojiIndex(data, s.realm.emoji);
      }
      this.emojiLoading = null;
    })();
    return this.emojiLoading;
  }

  // ---- Display ---------------------------------------------------------------------------

  /** The theme: the user's setting (1 automatic, 2 dark, 3 light), cached for the next load. */
  applyTheme(): void {
    const scheme = this.state.value?.settings.color_scheme ?? 1;
    setTheme(scheme === 2 ? 'dark' : scheme === 3 ? 'light' : '');
  }

  /**
   * Sets the user's status (`POST /users/me/status`, only what changed); true when the server
   * took it. It shows when its `user_status` event comes, as it does for everyone.
   */
  async setStatus(change: Parameters<ConfabClient['setStatus']>[0]): Promise<boolean> {
    try {
      await this.client.setStatus(change);
      return true;
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  async setTheme(scheme: 1 | 2 | 3): Promise<void> {
    const s = this.state.value;
    if (!s) return;
    s.settings = { ...s.settings, color_scheme: scheme };
    s.rev.settings.value++;
    this.applyTheme();
    try {
      await this.client.updateSettings({ color_scheme: scheme });
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * Asks the user to confirm, in the app's own dialog (confirm.tsx); true when they did. A new
   * question while one is open answers that one "no".
   */
  ask(q: Ask): Promise<boolean> {
    if (this.question.value) this.answer(false);
    const active = typeof document !== 'undefined' ? document.activeElement : null;
    this.focusBefore = active instanceof HTMLElement && active !== document.body ? active : null;
    return new Promise((resolve) => {
      this.answerQuestion = resolve;
      this.question.value = { ...q, id: ++this.questionSeq };
    });
  }

  /** The dialog's answer: it closes, and the focus goes back (or to the messages if that went). */
  answer(ok: boolean): void {
    const done = this.answerQuestion;
    if (!done) return;
    this.answerQuestion = null;
    this.question.value = null;
    const back = this.focusBefore;
    this.focusBefore = null;
    // Or what stands for it if it went meanwhile (focus-successor.ts), else the messages; from
    // a message's toolbar or "⋮", the list with that message selected (focus-back.ts).
    giveFocusBack(back, (id) => (this.selected.value = id));
    done(ok);
  }

  toast(text: string, kind: 'error' | 'info' = 'error'): void {
    const id = ++this.toastSeq;
    this.toasts.value = [...this.toasts.value.slice(-3), { id, text, kind }];
    setTimeout(() => this.dismiss(id), kind === 'info' ? 4_000 : 8_000);
  }

  dismiss(id: number): void {
    this.toasts.value = this.toasts.value.filter((t) => t.id !== id);
  }

  // ---- Keyboard navigation -----------------------------------------------------------------

  /**
   * The next topic (then conversation) with unread messages after the current one (`n`); with
   * `dmOnly`, the next direct message conversation with unread messages (the reference's `p`).
   */
  nextUnread(dmOnly = false): Narrow | null {
    const s = this.state.value;
    if (!s) return null;
    const cur = this.narrow.value;
    const channel = channelOf(cur);
    const dm =
      cur.terms.length === 1 && cur.terms[0]!.operator === 'dm' ? cur.terms[0]!.operand : undefined;
    const next = nextUnread(s.unreadCounts(), {
      // No channel listed: no topic is a candidate.
      channels: dmOnly ? [] : s.sortedSubs().map((x) => x.stream_id),
      channelMuted: (id) => s.channelMuted(id),
      mutedTopic: (id, topic) => s.mutedTopic(id, topic),
      topicMutedItself: (id, topic) => s.topicMutedItself(id, topic),
      // Where the channel's topics are loaded, their newest message (the sidebar's order).
      latest: (id, topic) => s.topics.get(id)?.find((x) => sameTopic(x.name, topic))?.maxId,
      at:
        channel !== undefined
          ? { streamId: channel, topic: topicOf(cur) }
          : dm !== undefined
            ? { dm }
            : null,
    });
    if (!next) return null;
    return next.kind === 'stream'
      ? topicNarrow(next.streamId, next.topic)
      : dmNarrow(next.key.split(',').map(Number), s.selfId);
  }
}

/** The box of what opened a card, where the card is drawn beside it. */
export function box(el: Element | null | undefined): CardAt['anchor'] {
  const r = el?.getBoundingClientRect();
  return r ? { left: r.left, top: r.top, right: r.right, bottom: r.bottom } : null;
}
