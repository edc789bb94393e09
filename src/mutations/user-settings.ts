/**
 * PATCH /settings: a user's own name, password, e-mail address (a confirmed change), personal
 * settings and time zone, in one transaction. Reference: views/user_settings.py
 * json_change_settings, actions/user_settings.py (do_change_user_setting, do_change_password,
 * do_start_email_change_process, check_change_full_name).
 *
 * Events: each changed setting reaches the user's own queues as `user_settings` `update` (with
 * `language_name` for default_language), plus its legacy twin for clients without the
 * `user_settings_object` capability (`update_global_notifications` / `update_display_settings`;
 * the event queues drop them for the others). A time zone change also reaches everyone as a
 * `realm_user` `update`; a name change likewise; email_address_visibility changes who sees the
 * user's real address (`delivery_email` updates to those it changes for) and, to or from
 * "everyone", the address others see (`new_email`).
 */
import { AccountDeactivatedError, ConfirmationLinkError } from '../lib/errors.js';
import { languageName } from '../lib/languages.js';
import { Role } from '../lib/roles.js';
import {
  canAccessDeliveryEmail,
  DISPLAY_SETTINGS_LEGACY,
  EmailVisibility,
  NOTIFICATION_SETTINGS_LEGACY,
  USER_SETTING_DEFAULTS,
  type UserSettingName,
  type UserSettings,
} from '../lib/user-settings.js';
import { EmailChangeStatus, type EmailChangeRow } from '../storage/accounts.js';
import { emailChangedMail, emailChangeMail } from '../lib/mail.js';
import { enqueueMail, mailRealm } from './mail.js';
import type { UserRow } from '../storage/users.js';
import { checkFullName } from '../lib/user-rules.js';
import type { MutationContext } from './context.js';
import { endLoginSessions } from './sessions.js';
import { deleteAllDrafts } from './drafts.js';
import { presenceSettingChanged } from './presence.js';
import {
  checkUniqueName,
  doChangeDeliveryEmail,
  doChangeFullName,
  validateEmailChangeRequest,
} from './users.js';

/** How long an e-mail confirmation link stays valid (the reference's default: one day). */
export const EMAIL_CHANGE_VALIDITY_SECONDS = 24 * 60 * 60;

export type ChangeSettingsCommand = {
  user_id: number;
  /** Raw; trimmed and checked here (the name rules need the realm's other names). */
  full_name?: string;
  /** The new password, already verified against the old one and hashed (outside the actor). */
  password_hash?: string;
  /**
   * With a new password: the login session that asked for it (its token's hash), which stays;
   * the user's other sessions end.
   */
  keep_session?: string;
  /** Start a change of address: a pending change with this (secret) confirmation key. */
  email_change?: { new_email: string; confirmation_key: string };
  settings: Partial<UserSettings>;
  timezone?: string;
  /** `user<id>@<this>` is the address others see when the user's real one is hidden from them. */
  fake_email_domain: string;
};

export type ChangeSettingsResult = {
  /** The pending address change started, if any (the caller hands out the confirmation link). */
  email_change: { old_email: string; new_email: string; confirmation_key: string } | null;
};

function emitSettingEvents(
  ctx: MutationContext,
  user: UserRow,
  name: UserSettingName | 'timezone',
  value: unknown,
): void {
  const language =
    name === 'default_language' ? { language_name: languageName(String(value)) } : {};
  ctx.emit({ type: 'user_settings', op: 'update', property: name, value, ...language }, [user.id]);
  if ((NOTIFICATION_SETTINGS_LEGACY as readonly string[]).includes(name)) {
    ctx.emit(
      {
        type: 'update_global_notifications',
        user: user.email,
        notification_name: name,
        setting: value,
      },
      [user.id],
    );
  }
  if ((DISPLAY_SETTINGS_LEGACY as readonly string[]).includes(name) || name === 'timezone') {
    ctx.emit(
      {
        type: 'update_display_settings',
        user: user.email,
        setting_name: name,
        setting: value,
        ...language,
      },
      [user.id],
    );
  }
}

/** Who may see the real address of `user` changes with their email_address_visibility. */
function emitEmailVisibilityChange(
  ctx: MutationContext,
  user: UserRow,
  before: number,
  after: number,
  fakeEmailDomain: string,
): void {
  const { store, realm } = ctx;
  const nowVisible: number[] = [];
  const nowHidden: number[] = [];
  for (const v of realm.activeUsers()) {
    if (v.id === user.id) continue;
    const could = canAccessDeliveryEmail(v.role, before);
    const can = canAccessDeliveryEmail(v.role, after);
    if (could !== can) (can ? nowVisible : nowHidden).push(v.id);
  }
  if (nowVisible.length > 0)
    ctx.emit(
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: user.id, delivery_email: user.delivery_email },
      },
      nowVisible,
    );
  if (nowHidden.length > 0)
    ctx.emit(
      { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: null } },
      nowHidden,
    );
  // The visible `email` is the real address only for "everyone"; otherwise a stand-in.
  if (before !== EmailVisibility.EVERYONE && after !== EmailVisibility.EVERYONE) return;
  const email =
    after === EmailVisibility.EVERYONE ? user.delivery_email : `user${user.id}@${fakeEmailDomain}`;
  if (email === user.email) return;
  store.users.setEmail(user.id, email);
  ctx.emit(
    { type: 'realm_user', op: 'update', person: { user_id: user.id, new_email: email } },
    realm.activeUsers().map((u) => u.id),
  );
}

/** A settings change checked: the user, the e-mail change to request, the new full name. */
export type SettingsChange = {
  cmd: ChangeSettingsCommand;
  user: UserRow;
  emailChange: { new_email: string; confirmation_key: string } | null;
  fullName: string | null;
};

export function checkChangeSettings(
  ctx: MutationContext,
  cmd: ChangeSettingsCommand,
): SettingsChange {
  const { store, realm } = ctx;
  const user = store.users.byId(cmd.user_id);
  if (!user || user.realm_id !== realm.id || !user.is_active) throw new AccountDeactivatedError();
  let emailChange: SettingsChange['emailChange'] = null;
  if (cmd.email_change && cmd.email_change.new_email !== user.delivery_email) {
    validateEmailChangeRequest(ctx, user, cmd.email_change.new_email);
    emailChange = cmd.email_change;
  }
  let fullName: string | null = null;
  if (cmd.full_name !== undefined && cmd.full_name !== user.full_name) {
    // As the reference: with name changes disabled, a non-administrator's change is ignored.
    if (!realm.settings.name_changes_disabled || user.role <= Role.ADMINISTRATOR) {
      const name = checkFullName(cmd.full_name);
      checkUniqueName(realm, name, user.id);
      if (name !== user.full_name) fullName = name;
    }
  }
  return { cmd, user, emailChange, fullName };
}

export function doChangeSettings(
  ctx: MutationContext,
  change: SettingsChange,
): ChangeSettingsResult {
  const { store, realm } = ctx;
  const { cmd, user } = change;
  const result: ChangeSettingsResult = { email_change: null };

  if (cmd.password_hash !== undefined) {
    store.users.setPasswordHash(user.id, cmd.password_hash);
    endLoginSessions(ctx, [user.id], cmd.keep_session ?? null);
  }

  if (change.emailChange) {
    const { new_email, confirmation_key } = change.emailChange;
    // A new request replaces any earlier one still pending.
    store.accounts.revokePendingEmailChanges(user.id);
    store.accounts.insertEmailChange({
      realm_id: realm.id,
      user_id: user.id,
      old_email: user.delivery_email,
      new_email,
      confirmation_key,
      created_at: ctx.now,
    });
    result.email_change = { old_email: user.delivery_email, new_email, confirmation_key };
    if (ctx.mail) {
      const where = mailRealm(ctx);
      enqueueMail(
        ctx,
        'email_change',
        new_email,
        emailChangeMail({
          realm: where,
          host: new URL(where.url).host,
          oldEmail: user.delivery_email,
          newEmail: new_email,
          link: `${where.url}/accounts/confirm_new_email/${confirmation_key}`,
        }),
      );
    }
  }

  if (change.fullName !== null) doChangeFullName(ctx, user, change.fullName);

  const current = realm.userSettings(user.id);
  const stored = JSON.parse(user.settings) as Partial<Record<UserSettingName, unknown>>;
  const changed: [UserSettingName, unknown][] = [];
  for (const [name, value] of Object.entries(cmd.settings) as [UserSettingName, unknown][]) {
    if (value === undefined || current[name] === value) continue;
    if (USER_SETTING_DEFAULTS[name] === value) delete stored[name];
    else stored[name] = value;
    changed.push([name, value]);
  }
  if (changed.length > 0) {
    store.users.setSettings(user.id, JSON.stringify(stored));
    for (const [name, value] of changed) {
      emitSettingEvents(ctx, user, name, value);
      if (name === 'email_address_visibility') {
        emitEmailVisibilityChange(
          ctx,
          user,
          current.email_address_visibility,
          value as number,
          cmd.fake_email_domain,
        );
      }
      if (name === 'enable_drafts_synchronization' && value === false) {
        deleteAllDrafts(ctx, user.id);
      }
      if (name === 'presence_enabled') presenceSettingChanged(ctx, user, value as boolean);
    }
  }

  if (cmd.timezone !== undefined && cmd.timezone !== user.timezone) {
    store.users.setTimezone(user.id, cmd.timezone);
    emitSettingEvents(ctx, user, 'timezone', cmd.timezone);
    ctx.emit(
      {
        type: 'realm_user',
        op: 'update',
        person: { email: user.email, user_id: user.id, timezone: cmd.timezone },
      },
      realm.activeUsers().map((u) => u.id),
    );
  }
  ctx.afterCommit(() => realm.reloadUser(user.id));
  return result;
}

export type ConfirmEmailChangeCommand = { confirmation_key: string };

/**
 * Completes a pending e-mail address change (the confirmation link): the key must be pending,
 * unexpired, and still about the user's current address; the change is checked again (the
 * address may have been taken meanwhile) and made.
 */
export function checkConfirmEmailChange(
  ctx: MutationContext,
  cmd: ConfirmEmailChangeCommand,
): { row: EmailChangeRow; user: UserRow } {
  const { store, realm } = ctx;
  const row = store.accounts.emailChangeByKey(cmd.confirmation_key);
  if (!row || row.realm_id !== realm.id) throw new ConfirmationLinkError(false);
  const user = store.users.byId(row.user_id);
  if (
    row.status !== EmailChangeStatus.PENDING ||
    ctx.now - row.created_at > EMAIL_CHANGE_VALIDITY_SECONDS ||
    !user ||
    user.delivery_email !== row.old_email
  ) {
    throw new ConfirmationLinkError(true);
  }
  validateEmailChangeRequest(ctx, user, row.new_email);
  return { row, user };
}

export function doConfirmEmailChange(
  ctx: MutationContext,
  { row, user }: { row: EmailChangeRow; user: UserRow },
): { user_id: number; old_email: string; new_email: string } {
  ctx.store.accounts.setEmailChangeStatus(row.id, EmailChangeStatus.USED);
  doChangeDeliveryEmail(ctx, user, row.new_email);
  // The old address is told, as the reference's notify_change_in_email.
  if (ctx.mail) {
    const where = mailRealm(ctx);
    enqueueMail(
      ctx,
      'email_changed',
      row.old_email,
      emailChangedMail({ realm: where, host: new URL(where.url).host, newEmail: row.new_email }),
    );
  }
  return { user_id: user.id, old_email: row.old_email, new_email: row.new_email };
}
