/**
 * What a new realm starts with, as the reference's realm creation gives it: three default
 * channels (#general for the whole team, #sandbox to try things, #Confab for questions about the
 * server), the announcements pointed at #general, and a few messages from Welcome Bot in each
 * channel, so that a new user has somewhere to write and something to read; then the Welcome
 * Bot's direct message to the owner, as to every new account. The owner is subscribed to all
 * three; later users join them as default channels.
 *
 * Everything goes through the realm's actor (channel.subscribe, message.send, ...), as a client's
 * requests would, so the read model and any open event queues see it.
 */
import type { RealmRegistry, RealmRuntime } from '../actors/registry.js';
import type { ServerConfig } from './config.js';
import { htmlToText } from './lib/search.js';
import { renderedMessage } from './lib/message-content.js';
import {
  checkCreateRealm,
  doCreateRealm,
  type CreateRealmParams,
  type CreateRealmResult,
} from './mutations/realms.js';
import { renderContextFor, renderDescription } from './queries/render-context.js';
import { subscribeCommand } from './lib/subscribe-command.js';
import { WELCOME_BOT } from './lib/welcome.js';
import { prepareWelcome } from './queries/welcome.js';
import type { Store } from './storage/store.js';
import type { RenderPool } from '../workers/pool.js';

export const DEFAULT_CHANNELS = [
  { name: 'general', description: 'Conversations for the whole team.' },
  { name: 'sandbox', description: 'A place to try things out. :test_tube:' },
  { name: 'Confab', description: 'Questions and answers about using Confab.' },
] as const;

type Welcome = { channel: string; topic: string; content: string };

/** The onboarding messages, in sending order (the last ones are the most visible). */
const WELCOME_MESSAGES: readonly Welcome[] = [
  {
    channel: 'Confab',
    topic: 'moving messages',
    content:
      'Messages that landed in the wrong place can be moved: to another topic, to another ' +
      'channel, or split off into a topic of their own. A topic can be renamed too.',
  },
  {
    channel: 'Confab',
    topic: 'moving messages',
    content: ':point_right: Move this message to another topic, then move it back.',
  },
  {
    channel: 'sandbox',
    topic: 'experiments',
    content: ':point_right: This topic is for trying out message formatting.',
  },
  {
    channel: 'sandbox',
    topic: 'experiments',
    content: [
      '```spoiler A few things to try',
      '',
      '````python',
      'print("a code block")',
      '````',
      '',
      '- a',
      '- list',
      '',
      'A link to a conversation: #**Confab>welcome to Confab!**',
      '',
      '```',
    ].join('\n'),
  },
  {
    channel: 'sandbox',
    topic: 'start a conversation',
    content:
      'To start a conversation, open a channel in the sidebar, then write in the compose box ' +
      'below the messages, with a topic that names the conversation.',
  },
  {
    channel: 'sandbox',
    topic: 'start a conversation',
    content:
      'A good topic finishes the sentence “Could we talk about…?” in a few words, so everyone ' +
      'can tell what the conversation is about.',
  },
  {
    channel: 'sandbox',
    topic: 'start a conversation',
    content: ':point_right: Start a new conversation in this channel.',
  },
  {
    channel: 'general',
    topic: 'greetings',
    content: 'Say hello :wave: to your teammates in this **greetings** topic.',
  },
  {
    channel: 'general',
    topic: 'greetings',
    content: ':point_right: Reply to this message to continue the conversation.',
  },
  {
    channel: 'Confab',
    topic: 'welcome to Confab!',
    content:
      'In Confab every conversation has a topic that says what it is about. This message is in ' +
      'the “welcome to Confab!” topic of the #**Confab** channel.',
  },
  {
    channel: 'Confab',
    topic: 'welcome to Confab!',
    content:
      'Topics let you read one conversation at a time, in context, however many others are ' +
      'going on at once.',
  },
  {
    channel: 'Confab',
    topic: 'welcome to Confab!',
    content:
      ':point_right: Channels, topics and direct messages with unread messages show their ' +
      'count in the sidebar; press `n` to go to the next unread topic.',
  },
];

export type RealmSetupDeps = {
  config: Pick<ServerConfig, 'externalHost' | 'externalScheme'>;
  store: Store;
  renderer: RenderPool;
};

/** Sets up a realm just created (doCreateRealm) whose owner is `ownerId`. */
export async function setUpNewRealm(
  deps: RealmSetupDeps,
  realm: RealmRuntime,
  ownerId: number,
): Promise<{ channel_ids: number[]; message_ids: number[] }> {
  const { config, store, renderer } = deps;
  const bot = await realm.ask('user.system_bot.ensure', WELCOME_BOT);

  await realm.ask(
    'channel.subscribe',
    subscribeCommand(
      ownerId,
      DEFAULT_CHANNELS.map((c) => ({
        name: c.name,
        description: c.description,
        rendered_description: renderDescription(config, store, realm.view, c.description, ownerId),
        color: null,
      })),
      { is_default_stream: true },
    ),
  );
  const channelIds = DEFAULT_CHANNELS.map((c) => realm.view.channels.byName(c.name)!.id);
  const general = channelIds[0]!;
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: {
      new_stream_announcements_stream_id: general,
      signup_announcements_stream_id: general,
      zulip_update_announcements_stream_id: general,
    },
  });

  const messageIds: number[] = [];
  for (const m of WELCOME_MESSAGES) {
    const context = renderContextFor(config, store, realm.view);
    const r = await renderer.render(m.content, context, {});
    const sent = await realm.ask('message.send', {
      sender_id: bot.user_id,
      to: { kind: 'channel', channel: m.channel, topic: m.topic },
      content: m.content,
      rendered: renderedMessage(r),
      search_text: htmlToText(r.rendered_content),
      client: 'Internal',
      read_by_sender: true,
    });
    messageIds.push(sent.id);
  }
  const greeting = WELCOME_MESSAGES.findIndex((m) => m.topic === 'greetings');
  await realm.ask('reaction.add', {
    user_id: bot.user_id,
    message_id: messageIds[greeting]!,
    emoji_name: 'wave',
  });
  // Then the owner's own welcome message, as any new account's (src/mutations/welcome.ts).
  await realm.ask('user.welcome.send', {
    user_id: ownerId,
    welcome: await prepareWelcome(deps, realm.view),
  });
  return { channel_ids: channelIds, message_ids: messageIds };
}

/**
 * Creates a realm (doCreateRealm: the row, system groups, owner) and sets it up as above. The
 * registry is the running server's, or the admin tool's own when no server runs.
 */
export async function createRealmWithDefaults(
  deps: RealmSetupDeps,
  realms: RealmRegistry,
  params: CreateRealmParams,
): Promise<CreateRealmResult> {
  const checked = checkCreateRealm(params);
  const created = await realms.createRealm(checked.string_id, () =>
    doCreateRealm(deps.store, checked),
  );
  await setUpNewRealm(deps, realms.get(created.realm_id)!, created.user_id);
  return created;
}
