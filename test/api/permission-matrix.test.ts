/**
 * The permission matrix over HTTP: each role (owner desdemona, administrator iago, moderator
 * shiva, member hamlet, guest polonius) × each action (create a public / private channel,
 * subscribe oneself, subscribe others, unsubscribe others, administer, change permissions, list,
 * read topics) on a public, a private shared-history and a private protected-history channel —
 * first while not subscribed, then while subscribed — with the answer the reference gives.
 *
 * The channels are created by prospero (a member, so the channel administrator by default), who
 * also undoes each successful action. A message sent before the actor subscribed (written straight
 * into the store: nothing sends messages in this branch) shows what history each role may read.
 */
import t, { type Test } from 'tap';
import type { ApiResponse } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ROLES = ['desdemona', 'iago', 'shiva', 'hamlet', 'polonius'] as const;
type Role = (typeof ROLES)[number];
const KINDS = ['public', 'shared', 'protected'] as const;
type Kind = (typeof KINDS)[number];

const OK = 'ok';
const GUEST = 'Not allowed for guest users';
const INSUFFICIENT = 'Insufficient permission';
const NOT_ADMIN = 'You do not have permission to administer this channel.';
const INVALID = 'Invalid channel ID';
const CONTENT = 'Channel content access is required.';
const unable = (k: Kind) => `Unable to access channel (${k}).`;
const missing = (k: Kind) => `Channel '${k}' does not exist`;

/** Outcomes for [owner, administrator, moderator, member, guest]. */
type Row = readonly [string, string, string, string, string];
type Table = Record<string, Record<Kind, Row>>;

const UNSUBSCRIBED: Table = {
  subscribe_self: {
    public: [OK, OK, OK, OK, GUEST],
    shared: [unable('shared'), unable('shared'), unable('shared'), unable('shared'), GUEST],
    protected: [
      unable('protected'),
      unable('protected'),
      unable('protected'),
      unable('protected'),
      GUEST,
    ],
  },
  subscribe_others: {
    public: [OK, OK, OK, OK, GUEST],
    shared: [unable('shared'), unable('shared'), unable('shared'), unable('shared'), GUEST],
    protected: [
      unable('protected'),
      unable('protected'),
      unable('protected'),
      unable('protected'),
      GUEST,
    ],
  },
  unsubscribe_others: {
    public: [OK, OK, INSUFFICIENT, INSUFFICIENT, missing('public')],
    shared: [OK, OK, missing('shared'), missing('shared'), missing('shared')],
    protected: [OK, OK, missing('protected'), missing('protected'), missing('protected')],
  },
  administer: {
    public: [OK, OK, NOT_ADMIN, NOT_ADMIN, INVALID],
    shared: [OK, OK, INVALID, INVALID, INVALID],
    protected: [OK, OK, INVALID, INVALID, INVALID],
  },
  change_permissions: {
    public: [OK, OK, NOT_ADMIN, NOT_ADMIN, INVALID],
    shared: [CONTENT, CONTENT, INVALID, INVALID, INVALID],
    protected: [CONTENT, CONTENT, INVALID, INVALID, INVALID],
  },
  list: {
    public: ['yes', 'yes', 'yes', 'yes', 'no'],
    shared: ['yes', 'yes', 'no', 'no', 'no'],
    protected: ['yes', 'yes', 'no', 'no', 'no'],
  },
  read_topics: {
    public: ['before', 'before', 'before', 'before', INVALID],
    shared: [INVALID, INVALID, INVALID, INVALID, INVALID],
    protected: [INVALID, INVALID, INVALID, INVALID, INVALID],
  },
};

const SUBSCRIBED: Table = {
  subscribe_self: {
    public: [OK, OK, OK, OK, GUEST],
    shared: [OK, OK, OK, OK, GUEST],
    protected: [OK, OK, OK, OK, GUEST],
  },
  subscribe_others: {
    public: [OK, OK, OK, OK, GUEST],
    shared: [OK, OK, OK, OK, GUEST],
    protected: [OK, OK, OK, OK, GUEST],
  },
  unsubscribe_others: {
    public: [OK, OK, INSUFFICIENT, INSUFFICIENT, INSUFFICIENT],
    shared: [OK, OK, INSUFFICIENT, INSUFFICIENT, INSUFFICIENT],
    protected: [OK, OK, INSUFFICIENT, INSUFFICIENT, INSUFFICIENT],
  },
  administer: {
    public: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
    shared: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
    protected: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
  },
  change_permissions: {
    public: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
    shared: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
    protected: [OK, OK, NOT_ADMIN, NOT_ADMIN, NOT_ADMIN],
  },
  list: {
    public: ['yes', 'yes', 'yes', 'yes', 'yes'],
    shared: ['yes', 'yes', 'yes', 'yes', 'yes'],
    protected: ['yes', 'yes', 'yes', 'yes', 'yes'],
  },
  // Protected history: only messages received while subscribed (none here).
  read_topics: {
    public: ['before', 'before', 'before', 'before', 'before'],
    shared: ['before', 'before', 'before', 'before', 'before'],
    protected: ['', '', '', '', ''],
  },
};

const outcome = (res: ApiResponse): string =>
  res.status === 200 ? OK : (res.body.msg as string) || `HTTP ${res.status}`;

type World = { ts: TestServer; ids: Record<Kind, number> };

async function world(t: Test): Promise<World> {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const prospero = fx.users.prospero!.id;
  const othello = fx.users.othello!.id;
  const ids = {
    public: await createChannel(api, 'prospero', 'public', { principals: [prospero, othello] }),
    shared: await createChannel(api, 'prospero', 'shared', {
      invite_only: true,
      history_public_to_subscribers: true,
      principals: [prospero, othello],
    }),
    protected: await createChannel(api, 'prospero', 'protected', {
      invite_only: true,
      principals: [prospero, othello],
    }),
  };
  for (const k of KINDS) await sendChannelMessage(api, 'prospero', ids[k], 'before', 'history');
  return { ts, ids };
}

/** Runs one action as `who` on channel `k`, undoes it when it succeeded, returns the outcome. */
async function act(w: World, action: string, who: Role, k: Kind): Promise<string> {
  const { api, fx } = w.ts;
  const id = w.ids[k];
  const cordelia = fx.users.cordelia!.id;
  const othello = fx.users.othello!.id;
  switch (action) {
    case 'subscribe_self': {
      const wasSubscribed = (
        (await api.get('prospero', `streams/${id}/members`)).body.subscribers as number[]
      ).includes(fx.users[who]!.id);
      const r = await api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: k }] });
      if (r.status === 200 && !wasSubscribed)
        await api.delete('prospero', 'users/me/subscriptions', {
          subscriptions: [k],
          principals: [fx.users[who]!.id],
        });
      return outcome(r);
    }
    case 'subscribe_others': {
      const r = await api.post(who, 'users/me/subscriptions', {
        subscriptions: [{ name: k }],
        principals: [cordelia],
      });
      if (r.status === 200)
        await api.delete('prospero', 'users/me/subscriptions', {
          subscriptions: [k],
          principals: [cordelia],
        });
      return outcome(r);
    }
    case 'unsubscribe_others': {
      const r = await api.delete(who, 'users/me/subscriptions', {
        subscriptions: [k],
        principals: [othello],
      });
      if (r.status === 200)
        await api.post('prospero', 'users/me/subscriptions', {
          subscriptions: [{ name: k }],
          principals: [othello],
        });
      return outcome(r);
    }
    case 'administer':
      return outcome(await api.patch(who, `streams/${id}`, { description: `by ${who}` }));
    case 'change_permissions': {
      const r = await api.patch(who, `streams/${id}`, {
        can_subscribe_group: { new: systemGroupId(w.ts, 'role:moderators') },
      });
      if (r.status === 200)
        await api.patch('prospero', `streams/${id}`, {
          can_subscribe_group: { new: systemGroupId(w.ts, 'role:nobody') },
        });
      return outcome(r);
    }
    case 'list': {
      const r = await api.get(who, 'streams', { include_all: true });
      return (r.body.streams as { stream_id: number }[]).some((s) => s.stream_id === id)
        ? 'yes'
        : 'no';
    }
    case 'read_topics': {
      const r = await api.get(who, `users/me/${id}/topics`);
      if (r.status !== 200) return outcome(r);
      return (r.body.topics as { name: string }[]).map((x) => x.name).join(',');
    }
  }
  throw new Error(`unknown action ${action}`);
}

async function runTable(t: Test, w: World, table: Table, label: string) {
  for (const [action, byKind] of Object.entries(table)) {
    for (const k of KINDS) {
      const got: string[] = [];
      for (const who of ROLES) got.push(await act(w, action, who, k));
      t.same(got, byKind[k], `${label}: ${action} on ${k} (owner admin moderator member guest)`);
    }
  }
}

t.test('creating channels, by role', async (t) => {
  const { api } = await startServer(t);
  for (const [i, who] of ROLES.entries()) {
    for (const invite_only of [false, true]) {
      const r = await api.post(who, 'users/me/subscriptions', {
        subscriptions: [{ name: `new ${i} ${invite_only}` }],
        invite_only,
      });
      t.equal(
        outcome(r),
        who === 'polonius' ? GUEST : OK,
        `${who} creates ${invite_only ? 'private' : 'public'}`,
      );
    }
  }
});

t.test('not subscribed', async (t) => {
  const w = await world(t);
  await runTable(t, w, UNSUBSCRIBED, 'not subscribed');
});

t.test('subscribed', async (t) => {
  const w = await world(t);
  const { api, fx } = w.ts;
  // Subscribe every actor (prospero administers the channels), then run the table.
  for (const k of KINDS) {
    const r = await api.post('prospero', 'users/me/subscriptions', {
      subscriptions: [{ name: k }],
      principals: ROLES.map((r) => fx.users[r]!.id),
    });
    t.equal(r.status, 200, `everyone subscribed to ${k}`);
  }
  await runTable(t, w, SUBSCRIBED, 'subscribed');
});
