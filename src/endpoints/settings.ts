/**
 * PATCH /settings (and its deprecated aliases PATCH /settings/display and
 * PATCH /settings/notifications): the caller's name, password, e-mail address, personal settings
 * and time zone. Reference: views/user_settings.py json_change_settings.
 *
 * Values are checked here first (types, allowed values, language, sound, batching period, time
 * zone), then the old password is verified and the new one hashed (scrypt, off the main thread),
 * and only then does the change enter the realm actor, where the rules that need the realm's data
 * (name rules, address taken) are checked and everything is written in one transaction.
 *
 * An address change is not made at once: it is confirmed by opening a link mailed to the new
 * address (written to the outbox by the realm actor with the request; without SMTP_URL the link
 * is logged for the operator to pass on), and GET /accounts/confirm_new_email/{key} completes
 * the change.
 */
import { log } from '../observability/log.js';
import crypto from 'node:crypto';
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { ConfirmationLinkError, HumanUsersOnlyError, JsonableError } from '../lib/errors.js';
import { bool, int, intValue, json, oneOf, ownNulRule, str } from '../lib/params.js';
import { emojisetIn } from '../lib/wire-names.js';
import { hashPassword, verifyPassword } from '../lib/password.js';
import { passwordLengthOk } from '../lib/user-rules.js';
import { isValidTimezone } from '../lib/timezones.js';
import { realmHost, realmUrl } from '../lib/urls.js';
import {
  checkSettingsValues,
  RETIRED_USER_SETTINGS,
  USER_SETTING_CHOICES,
  USER_SETTING_DEFAULTS,
  type UserSettingName,
  type UserSettings,
} from '../lib/user-settings.js';

/** The largest value the reference stores for its pixel and percent settings. */
const MAX_SMALL_INT = 32767;

/** The parameter schema of one personal setting (PATCH /settings and the realm's new-user defaults). */
export function settingParam(name: UserSettingName): z.ZodType {
  const def: unknown = USER_SETTING_DEFAULTS[name];
  const choices = USER_SETTING_CHOICES[name];
  if (typeof def === 'boolean') return bool().optional();
  if (typeof def === 'number') {
    if (choices)
      return json(
        intValue().refine((v) => choices.includes(v), { error: 'Invalid {var}' }),
      ).optional();
    if (name === 'email_notifications_batching_period_seconds') return int().optional();
    return json(
      intValue()
        .min(0, { error: '{var} is too small' })
        .max(MAX_SMALL_INT, { error: '{var} is too large' }),
    ).optional();
  }
  if (name === 'emojiset') {
    // Either spelling of the emoji sets (`google` or `vendora`); stored in the spec's.
    return z
      .string()
      .transform(emojisetIn)
      .pipe(oneOf(choices!.map(String) as [string, ...string[]]))
      .optional();
  }
  if (choices) return oneOf(choices.map(String) as [string, ...string[]]).optional();
  return str().optional();
}

const SETTING_NAMES = Object.keys(USER_SETTING_DEFAULTS) as UserSettingName[];

const settingsParams = z.object({
  full_name: ownNulRule(str()).optional(), // checkFullName
  email: str().optional(),
  // Only ever hashed: taken with a NUL, as the reference takes them.
  old_password: ownNulRule(str()).optional(),
  new_password: ownNulRule(str()).optional(),
  timezone: ownNulRule(str()).optional(), // "timezone is not a recognized time zone"
  ...Object.fromEntries(SETTING_NAMES.map((name) => [name, settingParam(name)])),
});

type SettingsParams = {
  full_name?: string;
  email?: string;
  old_password?: string;
  new_password?: string;
  timezone?: string;
} & Partial<UserSettings>;

/** A confirmation key: 24 lower-case letters and digits, like the reference's. */
function confirmationKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (const b of crypto.randomBytes(24)) out += alphabet[b % alphabet.length];
  return out;
}

async function changeSettings(ctx: AuthedCtx, raw: Record<string, unknown>): Promise<object> {
  const { server, realm, user } = ctx;
  const p = raw as SettingsParams;
  if (user.is_bot) throw new HumanUsersOnlyError();
  checkSettingsValues(p);
  if (p.timezone !== undefined && !isValidTimezone(p.timezone))
    throw new JsonableError('timezone is not a recognized time zone');

  let passwordHash: string | undefined;
  if (p.new_password !== undefined) {
    const ok =
      realm.view.settings.password_auth_enabled &&
      (await verifyPassword(p.old_password ?? '', user.password_hash));
    if (!ok) throw new JsonableError('Wrong password!');
    if (!passwordLengthOk(p.new_password)) throw new JsonableError('New password is too weak!');
    passwordHash = await hashPassword(p.new_password, server.config.scryptN);
  }

  const settings: Partial<Record<UserSettingName, unknown>> = {};
  for (const name of SETTING_NAMES) {
    // Retired settings (dense_mode) are accepted and have no effect.
    if (p[name] !== undefined && !RETIRED_USER_SETTINGS.has(name)) settings[name] = p[name];
  }
  const newEmail = p.email?.trim();
  const host = realmHost(server.config, realm.view.row.string_id);
  const result = await realm.ask('user.settings.update', {
    user_id: user.id,
    ...(p.full_name !== undefined ? { full_name: p.full_name } : {}),
    ...(passwordHash !== undefined ? { password_hash: passwordHash } : {}),
    // The browser session that set the password stays logged in; the user's others end.
    ...(passwordHash !== undefined && ctx.req.browser?.session
      ? { keep_session: ctx.req.browser.session.tokenHash }
      : {}),
    ...(newEmail !== undefined
      ? { email_change: { new_email: newEmail, confirmation_key: confirmationKey() } }
      : {}),
    settings: settings as Partial<UserSettings>,
    ...(p.timezone !== undefined ? { timezone: p.timezone } : {}),
    fake_email_domain: host.replace(/:\d+$/, ''),
  });
  // Without SMTP_URL the realm writes no mail: the link is logged for the operator to pass on.
  if (result.email_change && server.mailer === null) {
    const link = `${realmUrl(server.config, realm.view.row.string_id)}/accounts/confirm_new_email/${result.email_change.confirmation_key}`;
    log.warn(
      { to: result.email_change.new_email, link },
      'mail not sent (no SMTP_URL): address change confirmation',
    );
  }
  return {};
}

/** PATCH /api/v1/settings */
export const updateSettings = endpoint({
  method: 'PATCH',
  path: '/api/v1/settings',
  params: settingsParams,
  handle: (ctx, p) => changeSettings(ctx, p),
});

/** PATCH /api/v1/settings/display — deprecated alias of PATCH /settings (feature level 80). */
export const updateDisplaySettings = endpoint({
  method: 'PATCH',
  path: '/api/v1/settings/display',
  params: settingsParams,
  handle: (ctx, p) => changeSettings(ctx, p),
});

/** PATCH /api/v1/settings/notifications — deprecated alias of PATCH /settings. */
export const updateNotificationSettings = endpoint({
  method: 'PATCH',
  path: '/api/v1/settings/notifications',
  params: settingsParams,
  handle: (ctx, p) => changeSettings(ctx, p),
});

/**
 * GET /accounts/confirm_new_email/{key} — the link of an address-change confirmation: completes
 * the change (once; within a day), and the old address is told by mail, as the reference does.
 */
export const confirmEmailChange = endpoint({
  method: 'GET',
  path: '/accounts/confirm_new_email/:confirmation_key',
  auth: 'none',
  params: z.object({ confirmation_key: z.string() }),
  handle: async ({ realm }, p) => {
    if (!realm) throw new ConfirmationLinkError(false);
    const done = await realm.ask('user.email_change.confirm', {
      confirmation_key: p.confirmation_key,
    });
    return { email: done.new_email };
  },
});
