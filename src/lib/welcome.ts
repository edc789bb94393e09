/**
 * Welcome Bot and its first direct message to a new account. Reference: lib/onboarding.py
 * send_initial_direct_message, run by actions/create_user.py process_new_human_user for every
 * human account (the realm's creator too, after the realm's first channel messages): one direct
 * message from the Welcome Bot system bot, unread and starred for the new account, with no e-mail
 * or push notification (it is meant to be read in the app). Administrators get a line more about
 * running the organization.
 *
 * The wording is Confab's own and names what Confab's web app has (web/app): the compose box, `r`
 * to reply, `n` for the next unread topic, Settings behind the gear at the foot of the sidebar.
 * Both wordings are rendered before the realm actor creates the account (the role an invitation
 * gives is only settled there), and the account's creation picks one (src/mutations/welcome.ts).
 * welcomeBotReply (below): what the bot answers to a direct message sent to it.
 */
import { escapeText } from './markdown/tree.js';
import { inertRendering, type PreparedContent } from './message-content.js';
import { htmlToText } from './search.js';

/** The realm's Welcome Bot (a system bot: no owner; created on first need). */
export const WELCOME_BOT = { email: 'welcome-bot@zulip.com', full_name: 'Welcome Bot' };

/**
 * The welcome message in both wordings, ready for the realm actor; `custom`: an accepted
 * invitation's `welcome_message_custom_text` (when not empty), which the Welcome Bot sends as a
 * second message, as the reference's send_initial_direct_message.
 */
export type PreparedWelcome = {
  member: PreparedContent;
  admin: PreparedContent;
  custom?: PreparedContent;
};

/** The welcome message's markdown; `admin`: the account is an administrator or owner. */
export function welcomeText(admin: boolean): string {
  const lines = [
    'Hi, and welcome! :wave: I am Welcome Bot, and this message is just for you.',
    '',
    'A few things to get you started:',
    '',
    '- **Writing to a channel:** every channel conversation has a *topic*, a few words saying ' +
      'what it is about. Pick a channel in the sidebar (or press `c`), choose or type a topic ' +
      'above the compose box at the bottom, then write your message and press **Send**.',
    '- **Replying:** click **Reply** on a message, or select it and press `r`, to answer in the ' +
      'same conversation. Direct messages work the same way; start one with the **+** next to ' +
      '*Direct messages* in the sidebar.',
    '- **Catching up:** press `n` to go to the next topic with unread messages.',
    '- **Settings:** your name, password, theme and notifications are under the gear at the ' +
      'bottom of the sidebar, or go straight to [Settings](#settings/account).',
  ];
  if (admin) {
    lines.push(
      '- **Your organization:** as an administrator you can ' +
        '[invite people](#settings/invitations), manage [users](#settings/users) and ' +
        '[bots](#settings/bots), and change [the organization’s settings](#settings/organization) ' +
        'from Settings.',
    );
  }
  lines.push('', 'This message is starred, so you can find it again under **Starred**.');
  return lines.join('\n');
}

/**
 * What the Welcome Bot answers to a direct message (the reference's select_welcome_bot_response):
 * the whole message, trimmed and in lower case, is one of a few keywords; anything else gets the
 * list of keywords. The texts are Confab's own and point at what Confab's web app has.
 */
const REPLIES: { keywords: readonly string[]; text: readonly string[] }[] = [
  {
    keywords: ['app', 'apps'],
    text: [
      'Confab runs in your browser: there is nothing to install. Any client made for the ' +
        'Zulip-family API can connect as well; it logs in with your e-mail and password, or with ' +
        'your API key from [Settings → Account](#settings/account).',
    ],
  },
  {
    keywords: ['profile'],
    text: [
      'Your name is under [Settings → Account](#settings/account), with your e-mail and password.',
      '',
      'Others see you on your profile card: click anyone’s name or avatar on a message (or ' +
        'select the message and press `u`) to see theirs, with a button to write to them directly.',
    ],
  },
  {
    keywords: ['theme'],
    text: [
      'Light or dark: the sun or moon button at the bottom of the sidebar switches at once, and ' +
        '[Settings → Display](#settings/display) also offers following your system’s setting, ' +
        'and a 24-hour clock.',
    ],
  },
  {
    keywords: ['stream', 'streams', 'channel', 'channels'],
    text: [
      'Channels are where the team talks, each about one area. Yours are listed in the sidebar; ' +
        'press **Ctrl+K** (or the **+** beside *Channels*) to find any channel by name and join it, ' +
        'or to create a new one.',
      '',
      'The menu beside a channel’s name in the sidebar marks it read or mutes it.',
    ],
  },
  {
    keywords: ['topic', 'topics'],
    text: [
      'Every channel message has a topic, a few words saying what the conversation is about, so ' +
        'that several conversations can go on in one channel without mixing. Click a topic in ' +
        'the sidebar to read just that conversation; pick a new topic name in the compose box to ' +
        'start one.',
      '',
      'Press `n` to go to the next topic with unread messages.',
    ],
  },
  {
    keywords: ['keyboard', 'shortcuts', 'keyboard shortcuts'],
    text: [
      'A few keys, outside a text field:',
      '',
      '- **Ctrl+K** (**⌘K** on a Mac): jump to a channel, topic, person or view by name',
      '- `c`: a new message in the channel you are reading',
      '- `r` or **Enter**: reply to the selected message',
      '- `j` / `k` or the arrows: select the next or previous message',
      '- `n`: the next topic with unread messages',
      '- `e`: edit the selected message; `u`: its sender’s profile card',
      '- `/`: search',
      '- **Esc**: close what is open, or leave the compose box',
    ],
  },
  {
    keywords: ['formatting', 'message formatting'],
    text: [
      'Messages are written in Markdown: `**bold**`, `*italic*`, `[a link](https://example.com)`, ' +
        'lists starting with `-` or `1.`, backticks around inline code, and blocks fenced with ' +
        'three backticks (a language name after them highlights it). Also `@**Name**` to ' +
        'mention someone, `#**channel**` to link a channel, `:smile:` for emoji, and fences ' +
        'named `quote`, `spoiler` and `math`.',
    ],
  },
];

/** The keywords the Welcome Bot understands, as its answers list them. */
const KEYWORDS = [
  'apps',
  'profile',
  'theme',
  'channels',
  'topics',
  'keyboard shortcuts',
  'formatting',
];

function keywordList(withHelp: boolean): string {
  return [...KEYWORDS, ...(withHelp ? ['help'] : [])].map((k) => `\`${k}\``).join(', ') + '.';
}

/** The Welcome Bot's answer (markdown) to a direct message's content. */
export function welcomeBotReply(content: string): string {
  const said = content.trim().toLowerCase();
  const known = REPLIES.find((r) => r.keywords.includes(said));
  if (known) return known.text.join('\n');
  if (said === 'help' || said === '?') {
    return [
      `Send me one of these words and I will tell you more: ${keywordList(false)}`,
      '',
      'Everything else you can change is in [Settings](#settings/account), behind the gear at ' +
        'the bottom of the sidebar.',
    ].join('\n');
  }
  return `Sorry, I only understand a few words. Try one of these: ${keywordList(true)}`;
}

/**
 * The Notification Bot's notices about a new human account (the reference's notify_new_user and
 * the referrer's notice in process_new_human_user): a line in the realm's signup announcements
 * channel (topic SIGNUPS_TOPIC) for every account but a realm's first, and a direct message to
 * whoever sent the e-mail invitation it accepted, when the invitation asked for it. Each names the
 * new account with a silent mention, whose id exists only inside the transaction that creates the
 * account; so the notice is built there, in the markup the renderer gives that content (a silent
 * mention and plain text; test/unit/welcome-notices checks the two agree), not rendered before.
 */
export const SIGNUPS_TOPIC = 'signups';

function mentionNotice(user: { id: number; full_name: string }, rest: string): PreparedContent {
  const rendered_content =
    `<p><span class="user-mention silent" data-user-id="${user.id}">` +
    `${escapeText(user.full_name)}</span> ${escapeText(rest)}</p>`;
  return {
    content: `@_**${user.full_name}|${user.id}** ${rest}`,
    rendered: inertRendering(rendered_content),
    search_text: htmlToText(rendered_content),
  };
}

/** "<new account> joined this organization.", for the signup announcements channel. */
export function joinedNotice(user: { id: number; full_name: string }): PreparedContent {
  return mentionNotice(user, 'joined this organization.');
}

/** "<new account> accepted your invitation.", to the invitation's sender. */
export function invitationAcceptedNotice(user: { id: number; full_name: string }): PreparedContent {
  return mentionNotice(user, 'accepted your invitation.');
}
