/**
 * The settings' Bots panel and, for administrators, the mail outbox view (web/app/bots.tsx):
 * framework-free state over the API, given a `request` function (the app passes the typed
 * client's; tests a fake). Bots are listed from `GET /users` (every account, deactivated ones
 * included): the user's own bots, or every bot but the system bots for an administrator. A bot's
 * API key is never listed: it is shown once, when the bot is created and when its key is
 * regenerated (`revealed`), until the user dismisses it or does something else. Each change
 * reloads the list, so that what is shown is what the server has.
 */

import { Role } from '../../src/lib/roles.js';
import { isSystemBot } from './profile.js';

export type Request = <T = Record<string, unknown>>(
  method: string,
  path: string,
  params?: Record<string, unknown>,
) => Promise<T>;

/** The reference's bot types. */
export const BotType = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3 } as const;

export const BOT_TYPE_NAMES: Readonly<Record<number, string>> = {
  [BotType.GENERIC]: 'Generic',
  [BotType.INCOMING_WEBHOOK]: 'Incoming webhook',
  [BotType.OUTGOING_WEBHOOK]: 'Outgoing webhook',
};

export type Bot = {
  user_id: number;
  full_name: string;
  email: string;
  bot_type: number | null;
  owner_id: number | null;
  is_active: boolean;
};

/** A key to show once. */
export type RevealedKey = {
  user_id: number;
  full_name: string;
  email: string;
  api_key: string;
  /** The bot's kind (an incoming-webhook bot's key comes with its webhook URL). */
  bot_type: number;
};

/** The incoming webhooks the server takes (docs/integrations.md), URL name → what it is called. */
export const WEBHOOK_INTEGRATIONS: Record<string, string> = {
  json: 'Generic JSON',
  slack_incoming: 'Slack-compatible',
  github: 'GitHub',
  gitlab: 'GitLab',
  grafana: 'Grafana',
  alertmanager: 'Alertmanager',
  sentry: 'Sentry',
};

/**
 * The URL a service posts to as an incoming-webhook bot (`/api/v1/external/<integration>`, the
 * key in `api_key`), as the reference's "Generate URL" dialog builds it: to a channel by its id
 * (a rename keeps it working), or without one to the bot's owner as a direct message.
 */
export function webhookUrl(
  realmUrl: string,
  integration: string,
  apiKey: string,
  channelId: number | null,
): string {
  const q = new URLSearchParams({ api_key: apiKey });
  if (channelId !== null) q.set('stream', String(channelId));
  return `${realmUrl.replace(/\/+$/, '')}/api/v1/external/${integration}?${q.toString()}`;
}

export type NewBot = {
  full_name: string;
  /** The start of the bot's address (`<short_name>-bot@…`). */
  short_name: string;
  bot_type: number;
  /** Outgoing-webhook bots: where Confab POSTs what mentions them. */
  payload_url?: string;
};

type ApiUser = {
  user_id: number;
  full_name: string;
  email: string;
  is_bot: boolean;
  is_active?: boolean;
  bot_type?: number | null;
  bot_owner_id?: number | null;
};

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Why a new bot's fields cannot be sent, or null (the server checks again). */
export function newBotProblem(b: NewBot): string | null {
  if (b.full_name.trim() === '') return 'Give the bot a name.';
  if (!/^[A-Za-z0-9._-]+$/.test(b.short_name.trim()))
    return 'The bot’s username may have only letters, digits, dots, dashes and underscores.';
  if (BOT_TYPE_NAMES[b.bot_type] === undefined) return 'Choose a bot type.';
  if (b.bot_type === BotType.OUTGOING_WEBHOOK) {
    const url = (b.payload_url ?? '').trim();
    if (!/^https?:\/\/[^\s/]+/i.test(url)) return 'An outgoing webhook needs an http(s) URL.';
  }
  return null;
}

export class BotsState {
  bots: Bot[] = [];
  loaded = false;
  /** The last failure, shown until the next success. */
  error: string | null = null;
  busy = false;
  revealed: RevealedKey | null = null;
  /** Bumped on every change (the view re-renders on it). */
  rev = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly request: Request,
    private readonly me: { user_id: number; role: number },
  ) {}

  get isAdmin(): boolean {
    return this.me.role <= Role.ADMINISTRATOR;
  }

  /** Calls `fn` after every change; returns the unsubscribe. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.rev++;
    for (const fn of this.listeners) fn();
  }

  /** The active bots first, then by name. */
  get sorted(): Bot[] {
    return [...this.bots].sort(
      (a, b) =>
        Number(b.is_active) - Number(a.is_active) ||
        a.full_name.localeCompare(b.full_name) ||
        a.user_id - b.user_id,
    );
  }

  async load(): Promise<void> {
    try {
      const r = await this.request<{ members: ApiUser[] }>('GET', '/users');
      this.bots = r.members
        .filter(
          (u) =>
            u.is_bot && !isSystemBot(u) && (this.isAdmin || u.bot_owner_id === this.me.user_id),
        )
        .map((u) => ({
          user_id: u.user_id,
          full_name: u.full_name,
          email: u.email,
          bot_type: u.bot_type ?? null,
          owner_id: u.bot_owner_id ?? null,
          is_active: u.is_active !== false,
        }));
      this.loaded = true;
      this.error = null;
    } catch (e) {
      this.error = message(e);
    }
    this.changed();
  }

  /** One action: busy while it runs, its failure kept in `error`, the list reloaded after. */
  private async act<T>(fn: () => Promise<T>): Promise<T | null> {
    if (this.busy) return null;
    this.busy = true;
    this.revealed = null;
    this.error = null;
    this.changed();
    let out: T | null = null;
    let failure: string | null = null;
    try {
      out = await fn();
    } catch (e) {
      failure = message(e);
    }
    this.busy = false;
    await this.load();
    if (failure !== null) {
      this.error = failure;
      this.changed();
    }
    return out;
  }

  private reveal(userId: number, apiKey: string): void {
    const bot = this.bots.find((b) => b.user_id === userId);
    this.revealed = {
      user_id: userId,
      full_name: bot?.full_name ?? '',
      email: bot?.email ?? '',
      api_key: apiKey,
      bot_type: bot?.bot_type ?? BotType.GENERIC,
    };
    this.changed();
  }

  /** Creates the bot; true when it was, its key then `revealed`. */
  async create(b: NewBot): Promise<boolean> {
    const problem = newBotProblem(b);
    if (problem !== null) {
      this.error = problem;
      this.changed();
      return false;
    }
    const params: Record<string, unknown> = {
      full_name: b.full_name.trim(),
      short_name: b.short_name.trim(),
      bot_type: b.bot_type,
    };
    if (b.bot_type === BotType.OUTGOING_WEBHOOK) params.payload_url = (b.payload_url ?? '').trim();
    const r = await this.act(() =>
      this.request<{ user_id: number; api_key: string }>('POST', '/bots', params),
    );
    if (r === null) return false;
    this.reveal(r.user_id, r.api_key);
    return true;
  }

  async regenerateKey(userId: number): Promise<void> {
    const r = await this.act(() =>
      this.request<{ api_key: string }>('POST', `/bots/${userId}/api_key/regenerate`),
    );
    if (r !== null) this.reveal(userId, r.api_key);
  }

  async deactivate(userId: number): Promise<void> {
    await this.act(() => this.request('DELETE', `/bots/${userId}`));
  }

  async reactivate(userId: number): Promise<void> {
    await this.act(() => this.request('POST', `/users/${userId}/reactivate`));
  }

  /** The user has copied the key: it is not shown again. */
  dismissKey(): void {
    this.revealed = null;
    this.changed();
  }
}

// ---- the mail outbox (administrators) ----------------------------------------------------------

export type OutboxMail = {
  id: number;
  kind: string;
  recipient: string;
  subject: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
};

const KIND_NAMES: Readonly<Record<string, string>> = {
  invitation: 'Invitation',
  welcome: 'Welcome',
  email_change: 'Address change',
  email_changed: 'Address changed',
  password_reset: 'Password reset',
  missed_messages: 'Missed messages',
  bot_notice: 'Bot notice',
};

export function kindName(kind: string): string {
  return KIND_NAMES[kind] ?? kind;
}

/** "in 30 s", "in 5 min", "now", "3 h ago": a time relative to `now` (both UNIX seconds). */
export function relativeTime(at: number, now: number): string {
  const d = at - now;
  const a = Math.abs(d);
  if (a < 5) return 'now';
  const span =
    a < 60
      ? `${Math.round(a)} s`
      : a < 3600
        ? `${Math.round(a / 60)} min`
        : a < 86400
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86400)} d`;
  return d > 0 ? `in ${span}` : `${span} ago`;
}

export class OutboxState {
  mails: OutboxMail[] = [];
  /** All waiting mail of the realm (the list shows the oldest `limit`). */
  count = 0;
  enabled = true;
  loaded = false;
  error: string | null = null;
  rev = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly request: Request,
    readonly limit = 100,
  ) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async load(): Promise<void> {
    try {
      const r = await this.request<{
        outgoing_mail_enabled: boolean;
        count: number;
        mails: OutboxMail[];
      }>('GET', '/mail/outbox', { limit: this.limit });
      this.mails = r.mails;
      this.count = r.count;
      this.enabled = r.outgoing_mail_enabled;
      this.loaded = true;
      this.error = null;
    } catch (e) {
      this.error = message(e);
    }
    this.rev++;
    for (const fn of this.listeners) fn();
  }
}
