/**
 * Users: list, get one, get self, create. Reference: views/users.py (get_members_backend,
 * get_profile_backend, create_user_backend).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { JsonableError, NoSuchUserError } from '../lib/errors.js';
import { bool, intList, ownNulRule, pathInt, str } from '../lib/params.js';
import { hashPassword } from '../lib/password.js';
import { isValidEmail } from '../lib/email-validation.js';
import {
  checkCanCreateUsers,
  checkFullName,
  checkPasswordStrength,
  checkRealmAdministrator,
  ROLE_FOR_NEW_USER,
} from '../lib/user-rules.js';
import { formatUser, userByAddress } from '../queries/users.js';
import { prepareWelcome } from '../queries/welcome.js';
import { realmHost } from '../lib/urls.js';
import { maxMessageIdFor } from '../queries/messages-summary.js';
import type { RealmView } from '../queries/realm-view.js';
import type { UserRow } from '../storage/users.js';
import { RawJson, successJson } from '../http/respond.js';

/** GET /api/v1/users — every user of the realm, deactivated ones and bots included. */
export const getMembers = endpoint({
  method: 'GET',
  path: '/api/v1/users',
  compressAnswer: true,
  params: z.object({
    client_extavatar: bool().default(true),
    include_custom_profile_fields: bool().default(false),
    user_ids: intList().optional(),
  }),
  handle: ({ realm, user }, p) => {
    const view = realm.view;
    const wanted = p.user_ids ? new Set(p.user_ids) : null;
    if (p.user_ids) {
      for (const id of p.user_ids)
        if (!view.user(id)) throw new JsonableError(`Invalid user ID: ${id}`);
    }
    const members = [];
    for (const u of view.usersById.values()) {
      if (wanted && !wanted.has(u.id)) continue;
      members.push(
        formatUser(view, u, {
          viewerId: user.id,
          clientExtAvatar: p.client_extavatar,
          // Bots have no custom profile data: the reference sends none for them.
          ...(p.include_custom_profile_fields && !u.is_bot
            ? { profileData: view.profileData(u.id) }
            : {}),
        }),
      );
    }
    return { members };
  },
});

/** GET /api/v1/users/me — the caller's own account, flat (not under `user`). */
export const getProfile = endpoint({
  method: 'GET',
  path: '/api/v1/users/me',
  incomingWebhookBots: true,
  params: z.object({}),
  handle: ({ server, realm, user }) => {
    // Kept serialized until something it shows changes (RealmView.ownProfileJson).
    const maxMessageId = maxMessageIdFor(server.store, user.id);
    return new RawJson(
      realm.view.ownProfileJson(user, maxMessageId, () => {
        const body = successJson(ownProfile(realm.view, user, maxMessageId), []);
        return typeof body === 'string' ? body : body.toString();
      }),
    );
  },
});

/** GET /users/me's fields, in the reference's order. */
function ownProfile(view: RealmView, user: UserRow, maxMessageId: number): object {
  const u = formatUser(view, user, { viewerId: user.id });
  return {
    avatar_url: u.avatar_url,
    avatar_version: u.avatar_version,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    is_admin: u.is_admin,
    is_owner: u.is_owner,
    role: u.role,
    is_guest: u.is_guest,
    is_bot: u.is_bot,
    is_active: u.is_active,
    timezone: u.timezone,
    date_joined: u.date_joined,
    max_message_id: maxMessageId,
    user_id: u.user_id,
    ...(user.is_bot ? {} : { profile_data: view.profileData(user.id) }),
  };
}

/**
 * GET /api/v1/users/{user_id} and GET /api/v1/users/{email}: a path that is not a number is an
 * address (reference: views/users.py get_user_by_email, feature level 302): the user's API
 * address (`email`), their real address if the caller may see it, or the dummy address
 * `user{id}@{realm host}` of any user.
 */
export const getUser = endpoint({
  method: 'GET',
  path: '/api/v1/users/:user_id',
  params: z.object({
    user_id: str({ min: 1 }),
    client_extavatar: bool().default(true),
    include_custom_profile_fields: bool().default(false),
  }),
  handle: ({ server, realm, user }, p) => {
    const target = /^[0-9]{1,15}$/.test(p.user_id)
      ? realm.view.user(Number(p.user_id))
      : userByAddress(
          realm.view,
          user.id,
          p.user_id,
          realmHost(server.config, realm.view.row.string_id),
        );
    if (!target) throw new NoSuchUserError();
    return {
      user: formatUser(realm.view, target, {
        viewerId: user.id,
        clientExtAvatar: p.client_extavatar,
        ...(p.include_custom_profile_fields && !target.is_bot
          ? { profileData: realm.view.profileData(target.id) }
          : {}),
      }),
    };
  },
});

/**
 * POST /api/v1/users — administrators whose account has `can_create_users`. The password is
 * hashed (scrypt, off the main thread) before the command enters the realm actor.
 */
export const createUser = endpoint({
  method: 'POST',
  path: '/api/v1/users',
  params: z.object({
    email: str(),
    password: ownNulRule(str()), // only ever hashed
    full_name: ownNulRule(str()), // checkFullName
  }),
  handle: async ({ server, realm, user }, p) => {
    // Refused before the password is hashed; the realm actor checks again (user.create).
    checkCanCreateUsers(user);
    const fullName = checkFullName(p.full_name);
    const email = p.email.trim();
    if (!isValidEmail(email)) throw new JsonableError('Bad name or username');
    if (realm.view.userByEmail(email)) throw new JsonableError(`Email '${email}' already in use`);
    checkPasswordStrength(p.password);
    const passwordHash = await hashPassword(p.password, server.config.scryptN);
    const created = await realm.ask('user.create', {
      acting_user_id: user.id,
      email,
      full_name: fullName,
      password_hash: passwordHash,
      role: ROLE_FOR_NEW_USER,
      welcome: await prepareWelcome(server, realm.view),
    });
    return { user_id: created.user_id };
  },
});

/**
 * DELETE /api/v1/users/me — deactivate one's own account (reference: deactivate_user_own_backend).
 * The realm's only active account and its only owner are refused.
 */
export const deactivateOwnAccount = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me',
  params: z.object({}),
  handle: async ({ realm, user }) => {
    await realm.ask('user.deactivate_own', { user_id: user.id });
    return {};
  },
});

/** The longest deactivation_notification_comment (the reference's max_length). */
const MAX_DEACTIVATION_COMMENT_LENGTH = 2000;

/**
 * DELETE /api/v1/users/{user_id} — deactivate an account (administrators); with
 * `deactivation_notification_comment`, the person is told by mail.
 */
export const deactivateUser = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/:user_id',
  params: z.object({
    user_id: pathInt(),
    deactivation_notification_comment: str({ max: MAX_DEACTIVATION_COMMENT_LENGTH }).optional(),
  }),
  handle: async ({ realm, user }, p) => {
    checkRealmAdministrator(user);
    await realm.ask('user.deactivate', {
      acting_user_id: user.id,
      user_id: p.user_id,
      notification_comment: p.deactivation_notification_comment ?? null,
    });
    return {};
  },
});
