/**
 * Invitations: e-mail invitations (POST /invites), reusable links (POST /invites/multiuse),
 * revoking them, and accepting one (creating the account). Reference: views/invite.py,
 * actions/invites.py, actions/create_user.py (process_new_human_user).
 *
 * An e-mail invitation is stored with its link and mailed through the outbox in the same
 * transaction (docs/mail.md); without SMTP_URL it is only stored, and the inviter passes on the
 * link GET /invites shows (docs/api.md "Invitations").
 */
import { addSubscribersDecision } from '../lib/channel-permissions.js';
import {
  GuestNotAllowedError,
  InsufficientPermissionError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import {
  INVITES_MIN_USER_AGE_DAYS,
  InvitationError,
  invitationPath,
  checkInviteRole,
  generateConfirmationKey,
  parseInviteeEmails,
  type InvitationFailure,
} from '../lib/invitations.js';
import { Role, type Role as RoleValue } from '../lib/roles.js';
import type { PreparedWelcome } from '../lib/welcome.js';
import { tellReferrer } from './welcome.js';
import type { Channel } from '../queries/channels-view.js';
import { InvitationStatus, type InvitationRow } from '../storage/invitations.js';
import type { UserRow } from '../storage/users.js';
import { isValidEmail } from '../lib/email-validation.js';
import { usableInvitation } from '../queries/invites.js';
import { actingUser, type MutationContext } from './context.js';
import { notifyInvitesChanged } from './invitation-cleanup.js';
import { invitationMail } from '../lib/mail.js';
import { enqueueMail, mailRealm } from './mail.js';
import { accessUserGroupForUpdate } from './user-groups.js';
import {
  checkCreateUser,
  doCreateUser,
  type CreateUserCommand,
  type CreateUserResult,
} from './users.js';

/** The reference's require_member_or_admin, then whether the caller may invite at all. */
function inviter(ctx: MutationContext, userId: number): UserRow {
  const u = actingUser(ctx.realm, userId);
  if (u.role === Role.GUEST) throw new GuestNotAllowedError();
  if (u.is_bot) throw new JsonableError('This endpoint does not accept bot requests.');
  return u;
}

/**
 * The channels a new account will join: each must be one the inviter can read, and either a
 * default channel or one they may add subscribers to. Duplicates count once.
 */
function accessChannelsForInvite(ctx: MutationContext, user: UserRow, ids: number[]): Channel[] {
  const view = ctx.realm.channels;
  const out: Channel[] = [];
  for (const id of new Set(ids)) {
    const ch = view.byId(id);
    if (!ch || ch.deactivated || !view.may(user.id, ch, 'content'))
      throw new JsonableError(`Invalid channel ID ${id}. No invites were sent.`);
    out.push(ch);
  }
  for (const ch of out) {
    if (view.isDefault(ch.id)) continue;
    if (addSubscribersDecision(view.facts(user.id, ch)) !== 'ok')
      throw new JsonableError('You do not have permission to subscribe other users to channels.');
  }
  return out;
}

/** The user groups a new account will join: the inviter must be allowed to add members. */
function accessGroupsForInvite(ctx: MutationContext, user: UserRow, ids: number[]): number[] {
  const out: number[] = [];
  for (const id of new Set(ids)) {
    accessUserGroupForUpdate(ctx.realm, user.id, id, 'can_add_members_group');
    out.push(id);
  }
  return out;
}

type InviteOptions = {
  acting_user_id: number;
  invite_as: RoleValue;
  /** null: never expires. */
  invite_expires_in_minutes: number | null;
  stream_ids: number[];
  group_ids: number[];
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text: string | null;
};

/** The checks both kinds of invitation share, in the reference's order. */
function checkInviteOptions(
  ctx: MutationContext,
  user: UserRow,
  cmd: InviteOptions,
): { streamIds: number[]; groupIds: number[] } {
  const streams = accessChannelsForInvite(ctx, user, cmd.stream_ids);
  const groupIds = accessGroupsForInvite(ctx, user, cmd.group_ids);
  if (cmd.welcome_message_custom_text !== null && user.role > Role.ADMINISTRATOR)
    throw new OrganizationAdministratorRequiredError();
  return { streamIds: streams.map((ch) => ch.id), groupIds };
}

function insertInvitation(
  ctx: MutationContext,
  user: UserRow,
  cmd: InviteOptions,
  checked: { streamIds: number[]; groupIds: number[] },
  invitee: { email: string | null; notifyReferrerOnJoin: boolean },
): string {
  const key = generateConfirmationKey();
  ctx.store.invitations.insert({
    realm_id: ctx.realm.id,
    multiuse: invitee.email === null ? 1 : 0,
    email: invitee.email,
    referred_by: user.id,
    invited_as: cmd.invite_as,
    invited_at: ctx.now,
    expiry_date:
      cmd.invite_expires_in_minutes === null ? null : ctx.now + cmd.invite_expires_in_minutes * 60,
    confirmation_key: key,
    include_realm_default_subscriptions: cmd.include_realm_default_subscriptions ? 1 : 0,
    notify_referrer_on_join: invitee.notifyReferrerOnJoin ? 1 : 0,
    welcome_message_custom_text: cmd.welcome_message_custom_text,
    stream_ids: JSON.stringify(checked.streamIds),
    group_ids: JSON.stringify(checked.groupIds),
  });
  return key;
}

// ---- reusable invitation links --------------------------------------------------------------

/** POST /invites/multiuse. Returns the new link's confirmation key. */
/** Checked invitations: who invites, with which options, and the addresses (null: a link). */
export type InvitationsPlan = {
  user: UserRow;
  cmd: InviteOptions;
  checked: { streamIds: number[]; groupIds: number[] };
};

export function checkCreateMultiuseInvite(
  ctx: MutationContext,
  cmd: InviteOptions,
): InvitationsPlan {
  const user = inviter(ctx, cmd.acting_user_id);
  if (!ctx.realm.hasRealmPermission(user.id, 'create_multiuse_invite_group'))
    throw new InsufficientPermissionError();
  checkInviteRole(cmd.invite_as, user.role);
  const checked = checkInviteOptions(ctx, user, cmd);
  return { user, cmd, checked };
}

export function doCreateMultiuseInvite(
  ctx: MutationContext,
  { user, cmd, checked }: InvitationsPlan,
): { confirmation_key: string } {
  const key = insertInvitation(ctx, user, cmd, checked, {
    email: null,
    notifyReferrerOnJoin: true,
  });
  notifyInvitesChanged(ctx, [user.id]);
  return { confirmation_key: key };
}

// ---- e-mail invitations ---------------------------------------------------------------------

export type InviteUsersCommand = InviteOptions & {
  invitee_emails: string;
  notify_referrer_on_join: boolean;
};

/**
 * POST /invites. Refuses everything (INVITATION_FAILED, nothing stored) when an address is not
 * valid or nobody could be invited; addresses that already have an account are skipped and
 * returned, so the endpoint can say so after the others' invitations are stored.
 */
/** Checked e-mail invitations: the addresses to invite and those skipped. */
export type InviteUsersPlan = InvitationsPlan & {
  cmd: InviteUsersCommand;
  emails: string[];
  skipped: InvitationFailure[];
};

export function checkInviteUsers(ctx: MutationContext, cmd: InviteUsersCommand): InviteUsersPlan {
  const { realm } = ctx;
  const user = inviter(ctx, cmd.acting_user_id);
  if (!realm.hasRealmPermission(user.id, 'can_invite_users_group'))
    throw new InsufficientPermissionError();
  checkInviteRole(cmd.invite_as, user.role);
  if (cmd.invitee_emails === '')
    throw new JsonableError('You must specify at least one email address.');
  const emails = parseInviteeEmails(cmd.invitee_emails);
  const checked = checkInviteOptions(ctx, user, cmd);

  if (
    !realm.settings.invite_required &&
    user.role > Role.ADMINISTRATOR &&
    user.date_joined > ctx.now - INVITES_MIN_USER_AGE_DAYS * 86400
  ) {
    throw new InvitationError(
      'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
      [],
      { sentInvitations: false },
    );
  }

  const errors: InvitationFailure[] = [];
  const skipped: InvitationFailure[] = [];
  const good: string[] = [];
  for (const email of emails) {
    if (email === '') continue;
    if (!isValidEmail(email)) {
      errors.push([email, 'Invalid address.', false]);
      continue;
    }
    const existing = ctx.store.users.byDeliveryEmail(realm.id, email);
    if (existing) {
      skipped.push([
        email,
        existing.is_active ? 'Already has an account.' : 'Account has been deactivated.',
        !existing.is_active,
      ]);
      continue;
    }
    good.push(email);
  }
  if (errors.length > 0)
    throw new InvitationError(
      "Some emails did not validate, so we didn't send any invitations.",
      [...errors, ...skipped],
      { sentInvitations: false },
    );
  if (good.length === 0 && skipped.length > 0)
    throw new InvitationError("We weren't able to invite anyone.", skipped, {
      sentInvitations: false,
    });
  return { user, cmd, checked, emails: good, skipped };
}

export function doInviteUsers(
  ctx: MutationContext,
  { user, cmd, checked, emails, skipped }: InviteUsersPlan,
): { skipped: InvitationFailure[] } {
  // Only empty entries (", ,"): nothing to do, as the reference.
  if (emails.length === 0) return { skipped };
  for (const email of emails) {
    const key = insertInvitation(ctx, user, cmd, checked, {
      email,
      notifyReferrerOnJoin: cmd.notify_referrer_on_join,
    });
    const expiresAt =
      cmd.invite_expires_in_minutes === null ? null : ctx.now + cmd.invite_expires_in_minutes * 60;
    mailInvitation(ctx, user, email, key, expiresAt);
  }
  notifyInvitesChanged(ctx, [user.id]);
  return { skipped };
}

/** The invitation mail (when the server sends mail): the link that creates the account. */
function mailInvitation(
  ctx: MutationContext,
  referrer: UserRow,
  email: string,
  key: string,
  expiresAt: number | null,
): void {
  if (!ctx.mail) return;
  const realm = mailRealm(ctx);
  enqueueMail(
    ctx,
    'invitation',
    email,
    invitationMail({
      realm,
      referrerName: referrer.full_name,
      referrerEmail: referrer.email,
      link: realm.url + invitationPath(false, key),
      expiresAt,
      now: ctx.now,
    }),
  );
}

// ---- revoking -------------------------------------------------------------------------------

/**
 * An invitation of this realm the caller may manage: their own, or (administrators) anyone's —
 * an owner's role needs an owner. Reference: views/invite.py access_invite_by_id,
 * access_multiuse_invite_by_id.
 */
function accessInvitation(
  ctx: MutationContext,
  userId: number,
  id: number,
  multiuse: boolean,
): InvitationRow {
  const user = inviter(ctx, userId);
  const inv = ctx.store.invitations.byId(ctx.realm.id, id);
  if (!inv || (inv.multiuse === 1) !== multiuse) throw new JsonableError('No such invitation');
  if (inv.referred_by !== user.id) {
    if (inv.invited_as === Role.OWNER && user.role !== Role.OWNER)
      throw new OrganizationOwnerRequiredError();
    if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
  }
  return inv;
}

type RevokeInviteCommand = { acting_user_id: number; invite_id: number };

export function checkRevokeInvite(ctx: MutationContext, cmd: RevokeInviteCommand): InvitationRow {
  return accessInvitation(ctx, cmd.acting_user_id, cmd.invite_id, false);
}

/** DELETE /invites/{invite_id}: an e-mail invitation is deleted, its link stops working. */
export function doRevokeInvite(ctx: MutationContext, inv: InvitationRow): Record<string, never> {
  ctx.store.invitations.remove(inv.id);
  notifyInvitesChanged(ctx, [inv.referred_by]);
  return {};
}

export function checkRevokeMultiuseInvite(
  ctx: MutationContext,
  cmd: RevokeInviteCommand,
): InvitationRow {
  const inv = accessInvitation(ctx, cmd.acting_user_id, cmd.invite_id, true);
  if (inv.status === InvitationStatus.REVOKED)
    throw new JsonableError('Invitation has already been revoked');
  return inv;
}

/** DELETE /invites/multiuse/{invite_id}: the link is marked revoked. */
export function doRevokeMultiuseInvite(
  ctx: MutationContext,
  inv: InvitationRow,
): Record<string, never> {
  ctx.store.invitations.setStatus(inv.id, InvitationStatus.REVOKED);
  notifyInvitesChanged(ctx, [inv.referred_by]);
  return {};
}

/**
 * POST /invites/{invite_id}/resend: the same access as revoking; the invitation must still be
 * usable (an expired one is not shown by GET /invites either). Without SMTP_URL it says the
 * server cannot, instead of pretending to have sent one.
 */
export function checkResendInvite(
  ctx: MutationContext,
  cmd: { acting_user_id: number; invite_id: number },
): InvitationRow {
  const inv = accessInvitation(ctx, cmd.acting_user_id, cmd.invite_id, false);
  if (inv.status !== InvitationStatus.PENDING || (inv.expiry_date ?? Infinity) < ctx.now)
    throw new JsonableError('No such invitation');
  if (!ctx.mail)
    throw new JsonableError(
      'This server does not send email, so the invitation cannot be resent. Share its link with the invitee instead.',
    );
  return inv;
}

/** Mails the invitation again, as of now (the reference's do_send_user_invite_email). */
export function doResendInvite(ctx: MutationContext, inv: InvitationRow): Record<string, never> {
  const referrer = ctx.store.users.byId(inv.referred_by)!;
  ctx.store.invitations.setInvitedAt(inv.id, ctx.now);
  mailInvitation(ctx, referrer, inv.email!, inv.confirmation_key, inv.expiry_date);
  notifyInvitesChanged(ctx, [inv.referred_by]);
  return {};
}

// ---- accepting ------------------------------------------------------------------------------

export type AcceptInvitationCommand = {
  confirmation_key: string;
  /** The address a reusable link's user gives; ignored for an e-mail invitation. */
  email: string;
  full_name: string;
  password_hash: string;
  /** The Welcome Bot's message to the new account (CreateUserCommand.welcome). */
  welcome: PreparedWelcome | null;
};

/** What accepting an invitation does, as checked by checkAcceptInvitation. */
export type AcceptInvitationPlan = {
  inv: InvitationRow;
  /** The account to create (already checked by checkCreateUser). */
  user: CreateUserCommand;
  /** The user groups the new account joins. */
  groups: number[];
};

/**
 * Checks the account an invitation allows, through the same check as POST /users: the invited
 * role; the invitation's channels (those not archived since), plus the realm's default channels
 * when it said so; its user groups (those still active).
 */
export function checkAcceptInvitation(
  ctx: MutationContext,
  cmd: AcceptInvitationCommand,
): AcceptInvitationPlan {
  const { realm } = ctx;
  const inv = usableInvitation(ctx, cmd.confirmation_key, ctx.now);
  const email = inv.multiuse ? cmd.email : inv.email!;
  if (!isValidEmail(email)) throw new JsonableError('Invalid address.');

  const channelIds = new Set<number>(JSON.parse(inv.stream_ids) as number[]);
  if (inv.include_realm_default_subscriptions)
    for (const id of realm.channels.defaultChannelIds()) channelIds.add(id);
  const channels = [...channelIds].filter((id) => {
    const ch = realm.channels.byId(id);
    return ch !== undefined && !ch.deactivated;
  });
  const user = checkCreateUser(ctx, {
    acting_user_id: null,
    email,
    full_name: cmd.full_name,
    password_hash: cmd.password_hash,
    role: inv.invited_as as RoleValue,
    channel_ids: channels,
    welcome: cmd.welcome,
  });
  const groups = (JSON.parse(inv.group_ids) as number[]).filter((id) => {
    const g = realm.group(id);
    return g !== undefined && !g.deactivated && !g.is_system_group;
  });
  return { inv, user, groups };
}

/**
 * Creates the account (doCreateUser) and adds it to the invitation's groups. An e-mail
 * invitation is then used up; a reusable link stays valid.
 */
export function doAcceptInvitation(
  ctx: MutationContext,
  plan: AcceptInvitationPlan,
): CreateUserResult {
  const { realm, store } = ctx;
  const { inv, groups } = plan;
  // Marked before the account exists, so the new account's revoking of its address's other
  // invitations leaves this one as used.
  if (!inv.multiuse) store.invitations.setStatus(inv.id, InvitationStatus.USED);
  const created = doCreateUser(ctx, plan.user);
  if (!inv.multiuse) store.invitations.markUsed(inv.id, created.user_id);
  // An e-mail invitation that asked for it: its sender is told (a reusable link never asks).
  if (!inv.multiuse && inv.notify_referrer_on_join && plan.user.welcome !== null) {
    tellReferrer(ctx, inv.referred_by, store.users.byId(created.user_id)!);
  }

  const everyone = [...realm.activeUsers().map((u) => u.id), created.user_id];
  for (const groupId of groups) {
    store.groups.addMember(groupId, created.user_id);
    ctx.emit(
      { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [created.user_id] },
      everyone,
    );
  }
  ctx.afterCommit(() => {
    for (const groupId of groups) realm.addGroupMembers(groupId, [created.user_id]);
  });
  notifyInvitesChanged(ctx, [inv.referred_by]);
  return created;
}
