/**
 * The keyboard shortcuts panel (the `?` key, as the reference's keyboard shortcuts view): the
 * keys this app has, grouped as the reference's help groups them (The basics, Search,
 * Navigation, Composing messages, Message actions, Recent conversations, Inbox, Menus). A dialog
 * as the message menu's (message-dialogs.tsx): the close button has the focus as it opens, Esc
 * (or `?` again) closes it, and the focus goes back to what had it. Keep it true to the keys
 * shell.tsx and message-pane.tsx handle, and to docs/web.md's table.
 */
import { MessageDialog } from './message-dialogs.js';
import type { Controller } from './controller.js';

type Shortcut = { keys: string[][]; does: string };

/** Each entry's keys: alternatives, each a combination (pressed together). */
export const SHORTCUT_GROUPS: { name: string; shortcuts: Shortcut[] }[] = [
  {
    name: 'The basics',
    shortcuts: [
      { keys: [['r'], ['Enter']], does: 'Reply to the selected message' },
      { keys: [['c']], does: 'New channel message' },
      { keys: [['x']], does: 'New direct message' },
      { keys: [['Esc']], does: 'Close what is open, leave a field, else go to your home view' },
      { keys: [['d']], does: 'Drafts' },
      { keys: [['↓'], ['j']], does: 'Next message' },
      { keys: [['End']], does: 'Last message (marks those passed over as read)' },
      { keys: [['n']], does: 'Next unread topic' },
      { keys: [['p']], does: 'Next unread direct message' },
      { keys: [['/']], does: 'Search messages' },
      { keys: [['?']], does: 'These keyboard shortcuts' },
    ],
  },
  {
    name: 'Search',
    shortcuts: [
      { keys: [['/']], does: 'Search messages' },
      { keys: [['Ctrl', 'K']], does: 'Jump to a channel, topic or person, or search' },
      { keys: [['w']], does: 'Filter people' },
    ],
  },
  {
    name: 'Navigation',
    shortcuts: [
      { keys: [['Home']], does: 'First message' },
      { keys: [['↑'], ['k']], does: 'Previous message' },
      { keys: [['n']], does: 'Go to the next unread topic' },
      { keys: [['p']], does: 'Go to the next unread direct message' },
      { keys: [['s']], does: "The selected message's topic or direct conversation" },
      { keys: [['s']], does: "From a topic, its channel's feed" },
      { keys: [['Shift', 'P']], does: 'All direct messages' },
      { keys: [['Shift', 'I']], does: 'Inbox' },
      { keys: [['t']], does: 'Recent conversations' },
      { keys: [['a']], does: 'All messages' },
      { keys: [['*']], does: 'Starred messages' },
    ],
  },
  {
    name: 'Composing messages',
    shortcuts: [
      { keys: [['c']], does: 'New channel message' },
      { keys: [['x']], does: 'New direct message' },
      { keys: [['r'], ['Enter']], does: 'Reply to the selected message' },
      { keys: [['>']], does: 'Quote the selected message' },
      { keys: [['Shift', 'R']], does: 'Reply directly to the sender' },
      { keys: [['Enter']], does: 'Send (in the compose box)' },
      { keys: [['Shift', 'Enter']], does: 'New line (in the compose box)' },
      { keys: [['Esc']], does: 'Leave the compose box' },
    ],
  },
  {
    name: 'Message actions',
    shortcuts: [
      { keys: [['←']], does: 'Edit your last message' },
      { keys: [['e']], does: 'Edit the selected message' },
      { keys: [['u']], does: "The sender's profile card" },
      { keys: [['Shift', 'V']], does: 'Read receipts' },
      { keys: [['m']], does: "Move the selected message's topic" },
      { keys: [['Ctrl', 'S']], does: 'Star the message' },
      { keys: [['+']], does: 'React with 👍' },
      { keys: [['=']], does: 'Toggle the first emoji reaction' },
      { keys: [['Shift', 'U']], does: 'Mark as unread from the selected message' },
      { keys: [['Shift', 'M']], does: 'Mute or unmute the topic' },
    ],
  },
  {
    name: 'Recent conversations',
    shortcuts: [
      { keys: [['t']], does: 'Recent conversations' },
      { keys: [['↑'], ['↓'], ['←'], ['→']], does: 'Move between rows and their controls' },
      { keys: [['j'], ['k']], does: 'Next / previous row' },
      { keys: [['Enter']], does: 'Open the conversation' },
    ],
  },
  {
    name: 'Inbox',
    shortcuts: [
      { keys: [['Shift', 'I']], does: 'Inbox' },
      { keys: [['↑'], ['↓'], ['j'], ['k']], does: 'Move between rows' },
      { keys: [['Enter']], does: 'Open the conversation, or fold a group' },
    ],
  },
  {
    name: 'Menus',
    shortcuts: [
      { keys: [['?']], does: 'These keyboard shortcuts' },
      { keys: [[':']], does: 'Emoji reactions of the selected message' },
      { keys: [['i']], does: "The selected message's actions" },
    ],
  },
];

export function ShortcutsDialog({ c }: { c: Controller }) {
  return (
    <MessageDialog
      c={c}
      id="shortcuts-title"
      class="shortcuts-dialog"
      title="Keyboard shortcuts"
      onKey={(e) => {
        // `?` again closes it, as the reference's.
        if (e.key === '?' && !e.ctrlKey && !e.metaKey && !e.altKey) {
          e.preventDefault();
          c.dialog.value = null;
          return true;
        }
        return false;
      }}
    >
      {SHORTCUT_GROUPS.map((g) => (
        <section key={g.name} class="shortcuts-group" aria-labelledby={`shortcuts-${slug(g.name)}`}>
          <h3 id={`shortcuts-${slug(g.name)}`}>{g.name}</h3>
          <dl>
            {g.shortcuts.map((k) => (
              <div key={k.does} class="shortcut">
                <dt>{k.does}</dt>
                <dd>
                  {k.keys.map((combo, i) => (
                    <span key={i}>
                      {i > 0 && <span class="or"> or </span>}
                      {combo.map((key, j) => (
                        <span key={j}>
                          {j > 0 && ' + '}
                          <kbd>{key}</kbd>
                        </span>
                      ))}
                    </span>
                  ))}
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </MessageDialog>
  );
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z]+/g, '-');
