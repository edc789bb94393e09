/**
 * web/state/muted-users.ts: who is muted (register's list, each event's whole list), who may be
 * muted, what a muted user's message, reactions and typing become, the Muted users panel's rows;
 * the reducer's part (web/state/chat.ts) and the notification rule (web/state/notify.ts).
 */
import t from 'tap';
import type { Message, ServerEvent, UserSettings } from '../../src/client/types.js';
import type { StoredMessage } from '../../web/state/chat.js';
import {
  canMute,
  hiddenMessage,
  muteExplained,
  mutedRows,
  MutedUsers,
  MUTED_NAME,
  reactionNames,
  withoutMuted,
} from '../../web/state/muted-users.js';
import { buildRows } from '../../web/state/rows.js';
import { shouldNotify, shouldSound, type NotifyContext } from '../../web/state/notify.js';
import { chatState } from '../helpers/web-chat.js';

const people: Record<number, { name: string; email: string }> = {
  4: { name: 'Othello', email: 'othello@x' },
  5: { name: 'Cordelia', email: 'cordelia@x' },
  6: { name: 'iago', email: 'villain@x' },
};
const person = (id: number) => people[id] ?? { name: `User ${id}` };

t.test('the list: from register, replaced whole by each event', (t) => {
  const m = new MutedUsers([
    { id: 4, timestamp: 100 },
    { id: 5, timestamp: 200 },
  ]);
  t.ok(m.has(4));
  t.notOk(m.has(6));
  t.equal(m.since(5), 200);
  t.equal(m.since(6), undefined);
  t.equal(m.size, 2);
  m.set([{ id: 6, timestamp: 300 }]);
  t.same(m.list(), [{ id: 6, timestamp: 300 }], 'the event is the whole list');
  t.notOk(m.has(4), 'those left out are unmuted');
  t.equal(new MutedUsers().size, 0, 'none in the snapshot: nobody');
  t.end();
});

t.test('who may be muted, and what becomes of them', (t) => {
  const m = new MutedUsers([{ id: 4, timestamp: 1 }]);
  t.notOk(canMute(3, 3), 'not oneself');
  t.ok(canMute(3, 4), 'anyone else (bots too, as the reference)');
  t.ok(hiddenMessage(4, 3, m), "a muted user's message is hidden");
  t.notOk(hiddenMessage(5, 3, m), 'not the others’');
  t.notOk(hiddenMessage(3, 3, new MutedUsers([{ id: 3, timestamp: 1 }])), 'never one’s own');
  t.same(
    reactionNames([3, 4, 5], 3, m, (id) => person(id).name),
    ['You', MUTED_NAME, 'Cordelia'],
    'a reaction still counts them, without their name',
  );
  t.same(withoutMuted([4, 5, 6], m), [5, 6], 'not shown typing');
  t.match(muteExplained('Othello'), /Othello's messages will be hidden/);
  t.match(muteExplained('Othello'), /not notify you/);
  t.end();
});

t.test('the panel’s rows: by name, filtered by name or address', (t) => {
  const m = new MutedUsers([
    { id: 4, timestamp: 100 },
    { id: 6, timestamp: 50 },
    { id: 5, timestamp: 200 },
    { id: 9, timestamp: 300 },
  ]);
  t.same(
    mutedRows(m, person, '').map((r) => [r.id, r.name, r.since]),
    [
      [5, 'Cordelia', 200],
      [6, 'iago', 50],
      [4, 'Othello', 100],
      [9, 'User 9', 300],
    ],
  );
  t.same(
    mutedRows(m, person, ' OTH ').map((r) => r.id),
    [4],
    'any case, trimmed',
  );
  t.same(
    mutedRows(m, person, 'villain').map((r) => r.id),
    [6],
    'by e-mail too',
  );
  t.same(mutedRows(m, person, 'nobody'), []);
  t.same(mutedRows(new MutedUsers(), person, ''), []);
  t.end();
});

t.test('the message after a collapsed one shows its sender', (t) => {
  const m = new MutedUsers([{ id: 4, timestamp: 1 }]);
  const msg = (id: number, sender: number) =>
    ({
      id,
      sender_id: sender,
      type: 'stream',
      stream_id: 1,
      subject: 'a',
      timestamp: 100 + id,
    }) as Message;
  const list = [msg(1, 4), msg(2, 4), msg(3, 5), msg(4, 5)];
  const shown = (hidden?: (x: Message) => boolean) =>
    buildRows(list, { selfId: 3, dayOf: () => 'd', hidden })
      .filter((r) => r.kind === 'message')
      .map((r) => (r.kind === 'message' ? r.showSender : null));
  t.same(shown(), [true, false, true, false], 'grouped by sender');
  t.same(
    shown((x) => hiddenMessage(x.sender_id, 3, m)),
    [true, true, true, false],
    'each after a collapsed one starts anew',
  );
  t.end();
});

let id = 0;
const ev = (e: Record<string, unknown>) => ({ id: id++, ...e }) as unknown as ServerEvent;

const chat = (o: Record<string, unknown>) => chatState(o);

t.test('the reducer: register’s muted_users, then the event', (t) => {
  const s = chat({ muted_users: [{ id: 4, timestamp: 10 }] });
  t.ok(s.mutedUsers.has(4));
  const rev = s.rev.muted.value;
  s.apply([ev({ type: 'muted_users', muted_users: [{ id: 5, timestamp: 20 }] })]);
  t.notOk(s.mutedUsers.has(4));
  t.equal(s.mutedUsers.since(5), 20);
  t.equal(s.rev.muted.value, rev + 1, 'redraws what shows them');
  t.equal(chat({}).mutedUsers.size, 0);
  const inv = s.rev.invites.value;
  s.apply([ev({ type: 'invites_changed' })]);
  t.equal(s.rev.invites.value, inv + 1, 'invites_changed: the invitations panel fetches again');
  t.end();
});

t.test('no notification or sound from a muted sender', (t) => {
  const m = {
    id: 5,
    sender_id: 4,
    type: 'private',
    content: '<p>hi</p>',
    flags: [],
  } as unknown as StoredMessage;
  const ctx: NotifyContext = {
    selfId: 3,
    settings: { enable_desktop_notifications: true, enable_sounds: true } as UserSettings,
    sub: undefined,
    mutedTopic: false,
    followedTopic: false,
    seeing: false,
  };
  t.ok(shouldNotify(m, ctx), 'a direct message notifies');
  t.ok(shouldSound(m, ctx), 'and sounds');
  t.notOk(shouldNotify(m, { ...ctx, senderMuted: true }), 'not from a muted sender');
  t.notOk(shouldSound(m, { ...ctx, senderMuted: true }), 'nor a sound');
  t.end();
});
