/**
 * The Invitations panel (web/app/mute-invites.tsx): the pending invitations GET /invites lists —
 * e-mail invitations and reusable links, every one of the organization's for an administrator,
 * one's own for anyone else (the server decides) — as rows (who invited whom, as what, until
 * when), and Revoke (DELETE /invites/{id}, or /invites/multiuse/{id} for a link) and Resend (an
 * e-mail invitation: POST /invites/{id}/resend). Framework-free, given a `request` function (the
 * app passes its client's, tests a fake). Loaded on opening, after each of its own changes, and
 * again whenever the server says they changed (`invites_changed`: to administrators and to the
 * invitation's creator, as the reference).
 */
import { roleName } from './profile.js';
import type { Request } from './bots.js';

export type Invite = {
  id: number;
  invited_by_user_id: number;
  /** When it was made (UNIX seconds). */
  invited: number;
  /** UNIX seconds, or null: it never expires. */
  expiry_date: number | null;
  invited_as: number;
  is_multiuse: boolean;
  /** E-mail invitations. */
  email?: string;
  /** Reusable links. */
  link_url?: string;
};

export type InviteRow = {
  /** Unique across both kinds (their ids are separate sequences). */
  key: string;
  invite: Invite;
  /** The address invited, or the link's description. */
  invitee: string;
  invitedBy: string;
  role: string;
  expires: string;
};

/** When an invitation expires, in words: "Never", or a day and time in the browser's zone. */
export function expiryText(expiry: number | null, format: (seconds: number) => string): string {
  return expiry === null ? 'Never' : format(expiry);
}

/** The rows, newest invitation first (then by kind and id, for a stable order). */
export function inviteRows(
  invites: readonly Invite[],
  opts: { name: (id: number) => string; selfId: number; format: (seconds: number) => string },
): InviteRow[] {
  return [...invites]
    .sort(
      (a, b) =>
        b.invited - a.invited || Number(a.is_multiuse) - Number(b.is_multiuse) || b.id - a.id,
    )
    .map((inv) => ({
      key: `${inv.is_multiuse ? 'link' : 'mail'}${inv.id}`,
      invite: inv,
      invitee: inv.is_multiuse ? 'Reusable invitation link' : (inv.email ?? ''),
      invitedBy: inv.invited_by_user_id === opts.selfId ? 'You' : opts.name(inv.invited_by_user_id),
      role: roleName({ role: inv.invited_as }),
      expires: expiryText(inv.expiry_date, opts.format),
    }));
}

/** Where Revoke goes for this invitation. */
export function revokePath(inv: Invite): string {
  return inv.is_multiuse ? `/invites/multiuse/${inv.id}` : `/invites/${inv.id}`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class InvitesState {
  invites: Invite[] = [];
  loaded = false;
  /** The last failure (the server's words), until the next success. */
  error: string | null = null;
  /** What the last action did. */
  done: string | null = null;
  busy = false;
  private readonly listeners = new Set<() => void>();
  /** Loads in flight: only the last one's answer is kept. */
  private loads = 0;

  constructor(private readonly request: Request) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  async load(): Promise<void> {
    const n = ++this.loads;
    try {
      const r = await this.request<{ invites: Invite[] }>('GET', '/invites');
      if (n !== this.loads) return;
      this.invites = r.invites;
      this.loaded = true;
    } catch (e) {
      if (n !== this.loads) return;
      this.error = message(e);
    }
    this.changed();
  }

  private async act(fn: () => Promise<unknown>, said: string): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    this.error = null;
    this.done = null;
    this.changed();
    let ok = true;
    try {
      await fn();
      this.done = said;
    } catch (e) {
      this.error = message(e);
      ok = false;
    }
    this.busy = false;
    await this.load();
    return ok;
  }

  revoke(inv: Invite): Promise<boolean> {
    return this.act(
      () => this.request('DELETE', revokePath(inv)),
      inv.is_multiuse ? 'The link was revoked.' : `The invitation to ${inv.email} was revoked.`,
    );
  }

  resend(inv: Invite): Promise<boolean> {
    if (inv.is_multiuse) return Promise.resolve(false);
    return this.act(
      () => this.request('POST', `/invites/${inv.id}/resend`),
      `The invitation was sent to ${inv.email} again.`,
    );
  }
}
