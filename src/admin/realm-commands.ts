/**
 * The admin tool's commands on a realm's organization: rename or reactivate it, create a channel,
 * send a message as a bot, make an invitation link. Each goes through the realm's actor as the
 * API's would, so clients see it at once, and each is in the audit log as the tool's. The renderer's
 * context and the audit rows are imported when a command runs (commands.ts "Loading").
 */
import { nowSeconds } from '../lib/now.js';
import { invitationPath } from '../lib/invitations.js';
import { checkRealmName, MAX_REALM_NAME_LENGTH } from '../lib/realm-settings.js';
import {
  normalizeContent,
  normalizeTopic,
  preparedContent,
  type MessageDestination,
} from '../lib/message-content.js';
import { NOTIFICATION_BOT_EMAIL } from '../lib/notices.js';
import { Role, ROLE_NAMES } from '../lib/roles.js';
import { realmUrl } from '../lib/urls.js';
import { subscribeCommand } from '../lib/subscribe-command.js';
import type { AdminCommand } from './commands.js';
import {
  actingOwner,
  parseRole,
  realmArg,
  realmRuntime,
  REALM_DESC,
  REALM_OPT,
  str,
} from './command-args.js';
import { UsageError } from './errors.js';

/** The reference's INVITATION_LINK_VALIDITY_DAYS default. */
const DEFAULT_INVITATION_DAYS = 10;

export const REALM_COMMANDS: Record<string, AdminCommand> = {
  'rename-realm': {
    summary: 'Give a realm a new name.',
    options: { ...REALM_OPT, name: { type: 'string' } },
    describe: { ...REALM_DESC, name: `the new name (1 to ${MAX_REALM_NAME_LENGTH} characters)` },
    required: ['realm', 'name'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const name = checkRealmName(str(args, 'name'), (_, message) => {
        throw new UsageError(`--name ${message}`);
      });
      await realmRuntime(rt, row).ask('realm.update_settings', { acting_user_id: null, name });
      return { realm_id: row.id, name };
    },
  },

  'reactivate-realm': {
    summary: 'Reactivate a deactivated realm: its users can log in again.',
    options: { ...REALM_OPT },
    describe: { ...REALM_DESC },
    required: ['realm'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const already = row.deactivated === 0;
      if (!already) await realmRuntime(rt, row).ask('realm.reactivate', {});
      return { realm_id: row.id, deactivated: false, already_active: already };
    },
  },

  'create-channel': {
    summary: 'Create a channel (the realm’s first active owner creates it and is subscribed).',
    options: {
      ...REALM_OPT,
      name: { type: 'string' },
      description: { type: 'string', default: '' },
      private: { type: 'boolean' },
      default: { type: 'boolean' },
      'subscribe-everyone': { type: 'boolean' },
    },
    describe: {
      ...REALM_DESC,
      name: 'the channel’s name',
      description: 'its description (Markdown)',
      private: 'invite-only: only subscribers see it',
      default: 'a default channel: new users join it',
      'subscribe-everyone': 'subscribe every active user of the realm now',
    },
    required: ['realm', 'name'],
    async run(rt, args) {
      const { renderDescription } = await import('../queries/render-context.js');
      const row = realmArg(rt, args);
      const realm = realmRuntime(rt, row);
      const owner = actingOwner(realm);
      const name = str(args, 'name').trim();
      if (realm.view.channels.byName(name)) throw new UsageError(`the channel ${name} exists`);
      const description = str(args, 'description');
      const principals =
        args['subscribe-everyone'] === true
          ? realm.view
              .activeUsers()
              .filter((u) => !u.is_bot)
              .map((u) => u.id)
          : [owner];
      await realm.ask(
        'channel.subscribe',
        subscribeCommand(
          owner,
          [
            {
              name,
              description,
              rendered_description: renderDescription(
                rt.config,
                rt.store,
                realm.view,
                description,
                owner,
              ),
              color: null,
            },
          ],
          {
            principals,
            invite_only: args.private === true,
            is_default_stream: args.default === true,
          },
        ),
      );
      const channel = realm.view.channels.byName(name)!;
      return {
        realm_id: row.id,
        stream_id: channel.id,
        name: channel.name,
        invite_only: args.private === true,
        is_default_stream: args.default === true,
        subscribers: principals.length,
      };
    },
  },

  'send-message': {
    summary: 'Send a message as one of the realm’s bots (default: Notification Bot).',
    details:
      'To a channel and topic (--channel, --topic), or directly to users (--to, comma-separated\n' +
      'e-mail addresses). The content (Markdown) comes from --content, or from standard input\n' +
      'with --content-stdin.',
    options: {
      ...REALM_OPT,
      bot: { type: 'string' },
      channel: { type: 'string' },
      topic: { type: 'string' },
      to: { type: 'string' },
      content: { type: 'string' },
      'content-stdin': { type: 'boolean' },
    },
    describe: {
      ...REALM_DESC,
      bot: `the sending bot’s e-mail address (default ${NOTIFICATION_BOT_EMAIL})`,
      channel: 'the channel’s name',
      topic: 'the topic',
      to: 'direct message recipients: e-mail addresses, comma-separated',
      content: 'the message (Markdown)',
      'content-stdin': 'read the message from standard input',
    },
    required: ['realm'],
    async run(rt, args) {
      const { renderContextFor, renderOptionsFor } = await import('../queries/render-context.js');
      const { recordToolAction } = await import('./tool-audit.js');
      const row = realmArg(rt, args);
      const realm = realmRuntime(rt, row);
      const botEmail = typeof args.bot === 'string' ? args.bot : NOTIFICATION_BOT_EMAIL;
      const bot = realm.view.userByEmail(botEmail);
      if (!bot || !bot.is_bot || !bot.is_active)
        throw new UsageError(`${botEmail} is not an active bot of realm ${row.id}`);
      let to: MessageDestination;
      if (typeof args.channel === 'string') {
        if (typeof args.to === 'string') throw new UsageError('give --channel or --to, not both');
        if (typeof args.topic !== 'string') throw new UsageError('a channel message needs --topic');
        to = { kind: 'channel', channel: args.channel, topic: normalizeTopic(args.topic) };
      } else if (typeof args.to === 'string') {
        const emails = args.to
          .split(',')
          .map((e) => e.trim())
          .filter((e) => e !== '');
        if (emails.length === 0) throw new UsageError('--to names nobody');
        to = { kind: 'direct', emails };
      } else {
        throw new UsageError('give --channel and --topic, or --to');
      }
      const raw = typeof args.content === 'string' ? args.content : '';
      if (raw.trim() === '') throw new UsageError('the message is empty');
      const content = normalizeContent(raw);
      const r = await rt.renderer.render(
        content,
        renderContextFor(rt.config, rt.store, realm.view),
        renderOptionsFor(rt.store, realm.view, bot.id, content),
      );
      const sent = await realm.ask('message.send', {
        sender_id: bot.id,
        to,
        ...preparedContent(content, r),
        client: 'Internal',
        read_by_sender: true,
      });
      // Messages are no realm command the audit log records; this one is the operator's.
      recordToolAction(rt, row.id, 'message_sent_by_tool', {
        message_id: sent.id,
        bot: botEmail,
        ...(to.kind === 'channel' ? { channel: args.channel, topic: to.topic } : { to: args.to }),
      });
      return { realm_id: row.id, message_id: sent.id, sender: botEmail };
    },
  },

  'create-invitation': {
    summary: 'Make an invitation: a link for one e-mail address, or a reusable link (--multiuse).',
    details: 'Nothing is mailed: the link is printed, for you to pass on.',
    options: {
      ...REALM_OPT,
      email: { type: 'string' },
      multiuse: { type: 'boolean' },
      role: { type: 'string' },
      'expires-days': { type: 'string' },
    },
    describe: {
      ...REALM_DESC,
      email: 'the invited address (one invitation, for that address only)',
      multiuse: 'a link anyone who has it can join with',
      role: 'the role joiners get: member (default), moderator, administrator, owner or guest',
      'expires-days': `days the link works (default ${DEFAULT_INVITATION_DAYS}; 0: never expires)`,
    },
    required: ['realm'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const realm = realmRuntime(rt, row);
      if ((args.multiuse === true) === (typeof args.email === 'string'))
        throw new UsageError('give one of --email or --multiuse');
      const role = parseRole(typeof args.role === 'string' ? args.role : undefined);
      const days =
        args['expires-days'] === undefined ? DEFAULT_INVITATION_DAYS : Number(args['expires-days']);
      if (!Number.isInteger(days) || days < 0 || days > 3650)
        throw new UsageError('--expires-days is a number of days from 0 to 3650');
      const options = {
        acting_user_id: actingOwner(realm),
        invite_as: role,
        invite_expires_in_minutes: days === 0 ? null : days * 24 * 60,
        stream_ids: [],
        group_ids: [],
        include_realm_default_subscriptions: true,
        welcome_message_custom_text: null,
      };
      const base = realmUrl(rt.config, row.string_id);
      let key: string;
      if (args.multiuse === true) {
        key = (await realm.ask('invite.create_multiuse', options)).confirmation_key;
      } else {
        const email = str(args, 'email');
        const { skipped } = await realm.ask('invite.create', {
          ...options,
          invitee_emails: email,
          notify_referrer_on_join: false,
        });
        if (skipped.length > 0) throw new UsageError(`${email} already has an account`);
        const made = rt.store.invitations
          .validByRealm(row.id, nowSeconds(rt.config))
          .filter((r) => r.multiuse === 0 && r.email?.toLowerCase() === email.toLowerCase())
          .at(-1);
        if (!made) throw new Error('the invitation was not stored');
        key = made.confirmation_key;
      }
      return {
        realm_id: row.id,
        link: base + invitationPath(args.multiuse === true, key),
        invited_as: ROLE_NAMES[role] ?? Role.MEMBER,
        expires_in_days: days === 0 ? null : days,
        ...(typeof args.email === 'string' ? { email: args.email } : {}),
      };
    },
  },
};
