/**
 * Invitations. Reference: views/invite.py (invite_users_backend, get_user_invites,
 * revoke_user_invite, revoke_multiuse_invite, resend_user_invite_email,
 * generate_multiuse_invite_backend). Parameters are decoded here; who may invite whom, to which
 * channels and groups, is checked by the realm actor (src/mutations/invites.ts).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import { MAX_TIMESTAMP } from '../lib/drafts.js';
import { GuestNotAllowedError, JsonableError } from '../lib/errors.js';
import {
  INVITATION_LINK_VALIDITY_MINUTES,
  InvitationError,
  MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH,
  invitationPath,
} from '../lib/invitations.js';
import { bool, intValue, json, pathInt, str } from '../lib/params.js';
import { isRole, Role, type Role as RoleValue } from '../lib/roles.js';
import { realmUrl } from '../lib/urls.js';
import { invitesControlledBy } from '../queries/invites.js';
import type { UserRow } from '../storage/users.js';

const intListOrNull = () =>
  json(z.array(intValue(), { error: '{var} is not a list' }).nullable()).optional();

/** The parameters both kinds of invitation take. */
const inviteOptions = {
  invite_expires_in_minutes: json(intValue().nullable()).optional(),
  invite_as: json(intValue().refine(isRole, { error: 'Invalid {var}' })).optional(),
  group_ids: intListOrNull(),
  include_realm_default_subscriptions: bool().default(false),
  welcome_message_custom_text: str({ max: MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH }).optional(),
};

type InviteOptionParams = {
  invite_expires_in_minutes?: number | null | undefined;
  invite_as?: number | undefined;
  stream_ids?: number[] | null | undefined;
  group_ids?: number[] | null | undefined;
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text?: string | undefined;
};

/** The defaults, and an expiry the server can represent (until the end of year 9999). */
function optionsFor(user: UserRow, p: InviteOptionParams, now: number) {
  const minutes =
    p.invite_expires_in_minutes === undefined
      ? INVITATION_LINK_VALIDITY_MINUTES
      : p.invite_expires_in_minutes;
  if (minutes !== null) {
    const expiry = now + minutes * 60;
    if (expiry < 0 || expiry > MAX_TIMESTAMP)
      throw new JsonableError('Invalid invite_expires_in_minutes');
  }
  return {
    acting_user_id: user.id,
    invite_as: (p.invite_as ?? Role.MEMBER) as RoleValue,
    invite_expires_in_minutes: minutes,
    stream_ids: p.stream_ids ?? [],
    group_ids: p.group_ids ?? [],
    include_realm_default_subscriptions: p.include_realm_default_subscriptions,
    welcome_message_custom_text: p.welcome_message_custom_text ?? null,
  };
}

/** The reference's require_member_or_admin. */
function requireMemberOrAdmin(user: UserRow): void {
  if (user.role === Role.GUEST) throw new GuestNotAllowedError();
  if (user.is_bot) throw new JsonableError('This endpoint does not accept bot requests.');
}

/** POST /api/v1/invites/multiuse — a reusable invitation link. */
export const createMultiuseInvite = endpoint({
  method: 'POST',
  path: '/api/v1/invites/multiuse',
  params: z.object({ ...inviteOptions, stream_ids: intListOrNull() }),
  handle: async ({ server, realm, user }, p) => {
    requireMemberOrAdmin(user);
    const { confirmation_key } = await realm.ask(
      'invite.create_multiuse',
      optionsFor(user, p, nowSeconds(server.config)),
    );
    return {
      invite_link:
        realmUrl(server.config, realm.view.row.string_id) + invitationPath(true, confirmation_key),
    };
  },
});

/**
 * POST /api/v1/invites — e-mail invitations, each mailed through the outbox (without SMTP_URL,
 * only stored: docs/api.md "Invitations", docs/mail.md). Addresses that already have an account are reported after the others'
 * invitations are stored, as the reference's INVITATION_FAILED with `sent_invitations: true`.
 */
export const inviteUsers = endpoint({
  method: 'POST',
  path: '/api/v1/invites',
  params: z.object({
    ...inviteOptions,
    invitee_emails: z.string(),
    stream_ids: json(z.array(intValue(), { error: '{var} is not a list' })),
    notify_referrer_on_join: bool().default(true),
  }),
  handle: async ({ server, realm, user }, p) => {
    requireMemberOrAdmin(user);
    const { skipped } = await realm.ask('invite.create', {
      ...optionsFor(user, p, nowSeconds(server.config)),
      invitee_emails: p.invitee_emails,
      notify_referrer_on_join: p.notify_referrer_on_join,
    });
    if (skipped.length > 0)
      throw new InvitationError(
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
        skipped,
        { sentInvitations: true },
      );
    return {};
  },
});

/** GET /api/v1/invites — the pending, unexpired invitations the caller may manage. */
export const getInvites = endpoint({
  method: 'GET',
  path: '/api/v1/invites',
  params: z.object({}),
  handle: ({ server, realm, user }) => {
    requireMemberOrAdmin(user);
    return {
      invites: invitesControlledBy(
        server.store,
        realm.view,
        user.id,
        nowSeconds(server.config),
        realmUrl(server.config, realm.view.row.string_id),
      ),
    };
  },
});

/** DELETE /api/v1/invites/{invite_id} — revoke an e-mail invitation. */
export const revokeInvite = endpoint({
  method: 'DELETE',
  path: '/api/v1/invites/:invite_id',
  params: z.object({ invite_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    return realm.ask('invite.revoke', { acting_user_id: user.id, invite_id: p.invite_id });
  },
});

/** DELETE /api/v1/invites/multiuse/{invite_id} — revoke a reusable invitation link. */
export const revokeMultiuseInvite = endpoint({
  method: 'DELETE',
  path: '/api/v1/invites/multiuse/:invite_id',
  params: z.object({ invite_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    return realm.ask('invite.revoke_multiuse', {
      acting_user_id: user.id,
      invite_id: p.invite_id,
    });
  },
});

/**
 * POST /api/v1/invites/{invite_id}/resend — mails the invitation again (after the same checks as
 * revoking); without SMTP_URL it answers that it cannot.
 */
export const resendInvite = endpoint({
  method: 'POST',
  path: '/api/v1/invites/:invite_id/resend',
  params: z.object({ invite_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    return realm.ask('invite.resend', { acting_user_id: user.id, invite_id: p.invite_id });
  },
});
