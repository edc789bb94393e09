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
 */
import type { PreparedContent } from './message-content.js';

/** The realm's Welcome Bot (a system bot: no owner; created on first need). */
export const WELCOME_BOT = { email: 'welcome-bot@zulip.com', full_name: 'Welcome Bot' };

/** The welcome message in both wordings, ready for the realm actor. */
export type PreparedWelcome = { member: PreparedContent; admin: PreparedContent };

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
        '[invite people](#settings/invitations) and manage [bots](#settings/bots) from Settings.',
    );
  }
  lines.push('', 'This message is starred, so you can find it again under **Starred**.');
  return lines.join('\n');
}
