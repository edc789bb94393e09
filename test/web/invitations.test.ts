/**
 * web/state/invitations.ts with a fake API: the rows (newest first, who invited whom as what,
 * "Never" without an expiry), where Revoke goes for each kind, Resend only for e-mail, the list
 * fetched again after each change, a refusal kept, an older answer not overwriting a newer.
 */
import t from 'tap';
import type { Request } from '../../web/state/bots.js';
import {
  expiryText,
  inviteRows,
  InvitesState,
  revokePath,
  type Invite,
} from '../../web/state/invitations.js';

const mail = (id: number, o: Partial<Invite> = {}): Invite => ({
  id,
  invited_by_user_id: 3,
  invited: 1000 + id,
  expiry_date: 9000,
  invited_as: 400,
  is_multiuse: false,
  email: `p${id}@x`,
  ...o,
});
const link = (id: number, o: Partial<Invite> = {}): Invite => ({
  id,
  invited_by_user_id: 4,
  invited: 1000 + id,
  expiry_date: null,
  invited_as: 600,
  is_multiuse: true,
  link_url: `https://x/join/k${id}/`,
  ...o,
});
const opts = {
  name: (id: number) => (id === 4 ? 'Othello' : `User ${id}`),
  selfId: 3,
  format: (s: number) => `at ${s}`,
};

t.test('rows: newest first, who, as what, until when', (t) => {
  const rows = inviteRows([mail(1), link(1, { invited: 1005 }), mail(2, { invited: 1005 })], opts);
  t.same(
    rows.map((r) => [r.key, r.invitee, r.invitedBy, r.role, r.expires]),
    [
      ['mail2', 'p2@x', 'You', 'Member', 'at 9000'],
      ['link1', 'Reusable invitation link', 'Othello', 'Guest', 'Never'],
      ['mail1', 'p1@x', 'You', 'Member', 'at 9000'],
    ],
  );
  t.equal(expiryText(null, opts.format), 'Never');
  t.equal(inviteRows([mail(5, { invited_as: 200 })], opts)[0]!.role, 'Administrator');
  t.equal(revokePath(mail(7)), '/invites/7');
  t.equal(revokePath(link(7)), '/invites/multiuse/7');
  t.end();
});

type Call = [string, string];

function fake(lists: Invite[][], fail: Record<string, string> = {}) {
  const calls: Call[] = [];
  let n = 0;
  const request: Request = <T>(method: string, path: string): Promise<T> => {
    calls.push([method, path]);
    const why = fail[`${method} ${path}`];
    if (why) return Promise.reject(new Error(why));
    const body = method === 'GET' ? { invites: lists[Math.min(n++, lists.length - 1)] } : {};
    return Promise.resolve(body as T);
  };
  return { calls, st: new InvitesState(request) };
}

t.test('load, revoke, resend: the list fetched again after each', async (t) => {
  const { calls, st } = fake([[mail(1), link(2)], [link(2)], [link(2)]]);
  let changes = 0;
  st.subscribe(() => changes++);
  await st.load();
  t.ok(st.loaded);
  t.equal(st.invites.length, 2);
  t.ok(await st.revoke(mail(1)));
  t.equal(st.done, 'The invitation to p1@x was revoked.');
  t.same(
    st.invites.map((i) => i.id),
    [2],
    'fetched again',
  );
  t.ok(await st.revoke(link(2)));
  t.equal(st.done, 'The link was revoked.');
  t.notOk(await st.resend(link(2)), 'a link has no resend');
  t.same(calls, [
    ['GET', '/invites'],
    ['DELETE', '/invites/1'],
    ['GET', '/invites'],
    ['DELETE', '/invites/multiuse/2'],
    ['GET', '/invites'],
  ]);
  t.ok(changes > 0, 'the view hears of it');
  t.end();
});

t.test('a refusal kept for the view; resend', async (t) => {
  const { calls, st } = fake([[mail(1)]], { 'POST /invites/1/resend': 'No such invitation' });
  await st.load();
  t.notOk(await st.resend(mail(1)));
  t.equal(st.error, 'No such invitation');
  t.equal(st.done, null);
  t.equal(st.busy, false);
  t.same(calls.at(-1), ['GET', '/invites'], 'fetched again after a refusal too');
  const ok = fake([[mail(1)]]);
  t.ok(await ok.st.resend(mail(1)));
  t.equal(ok.st.done, 'The invitation was sent to p1@x again.');
  t.equal(ok.st.error, null);
  t.end();
});

t.test('an older answer does not overwrite a newer one', async (t) => {
  const answers: ((v: unknown) => void)[] = [];
  const st = new InvitesState((() => new Promise((res) => answers.push(res))) as never);
  const first = st.load();
  const second = st.load();
  answers[1]!({ invites: [mail(2)] });
  await second;
  answers[0]!({ invites: [mail(1)] });
  await first;
  t.same(
    st.invites.map((i) => i.id),
    [2],
  );
  t.end();
});
