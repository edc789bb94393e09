/**
 * The permission model (src/lib/channel-permissions.ts): each role × each action on a public,
 * a private shared-history and a private protected-history channel, subscribed or not, with a new
 * realm's default settings and a new channel's defaults (created by someone else). Then the
 * group-granted rights: channel administrators, can_subscribe_group, can_add_subscribers_group,
 * can_remove_subscribers_group, can_send_message_group, and guests in groups that exclude them.
 */
import t from 'tap';
import {
  addSubscribersDecision,
  administerDecision,
  hasMetadataAccess,
  may,
  metadataAudience,
  sendMessageDecision,
  type AccessFacts,
  type ChannelAction,
  type ChannelFacts,
  type ChannelGroupMembership,
  type RealmChannelMembership,
} from '../../src/lib/channel-permissions.js';

type RoleName = 'owner' | 'admin' | 'moderator' | 'member' | 'guest';
const ROLES: Record<RoleName, number> = {
  owner: 100,
  admin: 200,
  moderator: 300,
  member: 400,
  guest: 600,
};
const rank = (r: RoleName) => ROLES[r];

/** Realm defaults: who of each role is in each realm-level group. */
function realmDefaults(role: RoleName): RealmChannelMembership {
  const members = role !== 'guest';
  const admins = rank(role) <= 200;
  const moderators = rank(role) <= 300;
  return {
    can_add_subscribers_group: members,
    can_create_public_channel_group: members,
    can_create_private_channel_group: members,
    can_create_web_public_channel_group: role === 'owner',
    can_delete_any_message_group: admins,
    can_delete_own_message_group: true,
    can_set_delete_message_policy_group: moderators,
    can_set_topics_policy_group: moderators,
  };
}

/** A new channel's defaults, for a user who did not create it. */
function channelDefaults(role: RoleName): ChannelGroupMembership {
  return {
    can_add_subscribers_group: false,
    can_remove_subscribers_group: rank(role) <= 200,
    can_administer_channel_group: false,
    can_send_message_group: true,
    can_subscribe_group: false,
    can_delete_any_message_group: false,
    can_delete_own_message_group: false,
  };
}

const KINDS: Record<string, ChannelFacts> = {
  public: {
    invite_only: false,
    is_web_public: false,
    history_public_to_subscribers: true,
    deactivated: false,
  },
  private_shared: {
    invite_only: true,
    is_web_public: false,
    history_public_to_subscribers: true,
    deactivated: false,
  },
  private_protected: {
    invite_only: true,
    is_web_public: false,
    history_public_to_subscribers: false,
    deactivated: false,
  },
};

function facts(role: RoleName, kind: string, subscribed: boolean): AccessFacts {
  return {
    user: { role: ROLES[role], is_active: true },
    channel: KINDS[kind]!,
    subscribed,
    inChannel: channelDefaults(role),
    inRealm: realmDefaults(role),
  };
}

// Columns: owner admin moderator member guest ("y" allowed, "-" refused).
const ORDER: RoleName[] = ['owner', 'admin', 'moderator', 'member', 'guest'];
type Row = Record<ChannelAction, string>;

const EXPECTED: Record<string, { unsubscribed: Row; subscribed: Row }> = {
  public: {
    unsubscribed: {
      metadata: 'yyyy-',
      content: 'yyyy-',
      history: 'yyyy-',
      subscribe_self: 'yyyy-',
      add_subscribers: 'yyyy-',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: 'yy---',
      send_message: 'yyyy-',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
    subscribed: {
      metadata: 'yyyyy',
      content: 'yyyyy',
      history: 'yyyyy',
      subscribe_self: 'yyyy-',
      add_subscribers: 'yyyy-',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: 'yy---',
      send_message: 'yyyyy',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
  },
  private_shared: {
    unsubscribed: {
      metadata: 'yy---',
      content: '-----',
      history: '-----',
      subscribe_self: '-----',
      add_subscribers: '-----',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: '-----',
      send_message: '-----',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
    subscribed: {
      metadata: 'yyyyy',
      content: 'yyyyy',
      history: 'yyyyy',
      subscribe_self: 'yyyy-',
      add_subscribers: 'yyyy-',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: 'yy---',
      send_message: 'yyyyy',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
  },
  private_protected: {
    unsubscribed: {
      metadata: 'yy---',
      content: '-----',
      history: '-----',
      subscribe_self: '-----',
      add_subscribers: '-----',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: '-----',
      send_message: '-----',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
    subscribed: {
      metadata: 'yyyyy',
      content: 'yyyyy',
      history: '-----',
      subscribe_self: 'yyyy-',
      add_subscribers: 'yyyy-',
      remove_subscribers: 'yy---',
      administer: 'yy---',
      change_permissions: 'yy---',
      send_message: 'yyyyy',
      delete_any_message: 'yy---',
      delete_own_message: 'yyyyy',
    },
  },
};

t.test('role × action × channel kind, with default settings', (t) => {
  for (const [kind, bySub] of Object.entries(EXPECTED)) {
    for (const [state, row] of Object.entries(bySub)) {
      for (const [action, expected] of Object.entries(row)) {
        const got = ORDER.map((role) =>
          may(facts(role, kind, state === 'subscribed'), action as ChannelAction) ? 'y' : '-',
        ).join('');
        t.equal(got, expected, `${kind} ${state} ${action} (owner admin moderator member guest)`);
      }
    }
  }
  t.end();
});

t.test('the refusal kinds the endpoints turn into messages', (t) => {
  t.equal(administerDecision(facts('member', 'public', false)), 'forbidden', 'knows it, may not');
  t.equal(
    administerDecision(facts('member', 'private_shared', false)),
    'invalid',
    'must not learn',
  );
  t.equal(administerDecision(facts('guest', 'public', false)), 'invalid', 'guest, unsubscribed');
  t.equal(administerDecision(facts('guest', 'public', true)), 'forbidden', 'guest, subscribed');
  t.equal(addSubscribersDecision(facts('member', 'private_shared', false)), 'unauthorized');
  t.equal(addSubscribersDecision(facts('guest', 'public', true)), 'unauthorized', 'guests never');
  const noRealmRight = facts('member', 'public', false);
  noRealmRight.inRealm = { ...noRealmRight.inRealm, can_add_subscribers_group: false };
  t.equal(addSubscribersDecision(noRealmRight), 'forbidden');
  const notAllowed = facts('member', 'public', true);
  notAllowed.inChannel = { ...notAllowed.inChannel, can_send_message_group: false };
  t.equal(sendMessageDecision(notAllowed), 'not_allowed');
  t.equal(sendMessageDecision(facts('guest', 'public', false)), 'unauthorized');
  const archived = facts('member', 'public', true);
  archived.channel = { ...archived.channel, deactivated: true };
  t.equal(sendMessageDecision(archived), 'unauthorized', 'nobody posts to an archived channel');
  t.end();
});

t.test('rights granted through the channel’s groups', (t) => {
  const with_ = (
    role: RoleName,
    kind: string,
    subscribed: boolean,
    groups: Partial<ChannelGroupMembership>,
    realm: Partial<RealmChannelMembership> = {},
  ): AccessFacts => {
    const f = facts(role, kind, subscribed);
    f.inChannel = { ...f.inChannel, ...groups };
    f.inRealm = { ...f.inRealm, ...realm };
    return f;
  };
  // A channel administrator (the creator, by default) need not be subscribed to a private channel
  // to know it and administer it, but needs content access to open it up.
  const admin = with_('member', 'private_protected', false, { can_administer_channel_group: true });
  t.ok(may(admin, 'metadata'));
  t.ok(may(admin, 'administer'));
  t.ok(may(admin, 'remove_subscribers'));
  t.notOk(may(admin, 'content'));
  t.notOk(may(admin, 'change_permissions'));
  t.notOk(may(admin, 'subscribe_self'), 'administering is not content access');

  // can_subscribe_group gives content access to a private channel (history as the channel says).
  const sub = with_('member', 'private_shared', false, { can_subscribe_group: true });
  t.ok(may(sub, 'content'));
  t.ok(may(sub, 'history'));
  t.ok(may(sub, 'subscribe_self'));
  t.ok(may(sub, 'send_message'), 'shared history: may post without subscribing');
  const subProtected = with_('member', 'private_protected', false, { can_subscribe_group: true });
  t.notOk(may(subProtected, 'history'));
  t.notOk(may(subProtected, 'send_message'), 'protected history: must subscribe to post');

  // can_add_subscribers_group, without the realm-wide right.
  const adder = with_(
    'member',
    'private_shared',
    false,
    { can_add_subscribers_group: true },
    { can_add_subscribers_group: false },
  );
  t.equal(addSubscribersDecision(adder), 'ok');

  // can_remove_subscribers_group needs metadata access.
  const remover = with_('member', 'public', false, { can_remove_subscribers_group: true });
  t.ok(may(remover, 'remove_subscribers'));
  const blindRemover = with_('member', 'private_shared', false, {
    can_remove_subscribers_group: true,
  });
  t.notOk(may(blindRemover, 'remove_subscribers'));

  // Guests never count in settings that do not allow role:everyone.
  const guest = with_('guest', 'private_shared', false, {
    can_administer_channel_group: true,
    can_subscribe_group: true,
    can_add_subscribers_group: true,
  });
  t.notOk(may(guest, 'metadata'));
  t.notOk(may(guest, 'content'));
  t.notOk(may(guest, 'administer'));

  // Channel-level delete permissions.
  const deleter = with_('member', 'public', true, { can_delete_any_message_group: true });
  t.ok(may(deleter, 'delete_any_message'));
  const noOwnDelete = with_('member', 'public', true, {}, { can_delete_own_message_group: false });
  t.notOk(may(noOwnDelete, 'delete_own_message'));
  const ownByChannel = with_(
    'member',
    'public',
    true,
    { can_delete_own_message_group: true },
    { can_delete_own_message_group: false },
  );
  t.ok(may(ownByChannel, 'delete_own_message'));

  // Web-public channels are known to everyone, guests included.
  const web = facts('guest', 'public', false);
  web.channel = { ...web.channel, is_web_public: true };
  t.ok(may(web, 'metadata'));
  t.ok(may(web, 'history'));
  t.ok(may(web, 'send_message'));

  // A deactivated user may do nothing.
  const gone = facts('owner', 'public', true);
  gone.user = { ...gone.user, is_active: false };
  for (const a of ['metadata', 'content', 'administer', 'send_message'] as ChannelAction[])
    t.notOk(may(gone, a), `deactivated: ${a}`);
  t.end();
});

t.test('a bot posts where its owner may', (t) => {
  const bot = facts('member', 'private_shared', false);
  bot.inChannel = { ...bot.inChannel, can_send_message_group: false };
  const owner = facts('member', 'private_shared', true);
  t.equal(sendMessageDecision(bot, owner), 'ok');
  t.equal(sendMessageDecision(bot), 'not_allowed');
  t.end();
});

t.test('the realm-wide audience computation agrees with the per-user rule', (t) => {
  // Every combination of channel kind, role, subscription and membership in the three settings
  // that grant metadata access.
  const kinds: ChannelFacts[] = [
    ...Object.values(KINDS),
    {
      invite_only: false,
      is_web_public: true,
      history_public_to_subscribers: true,
      deactivated: false,
    },
  ];
  let checked = 0;
  for (const channel of kinds) {
    const users: { id: number; role: number }[] = [];
    const subscribers = new Set<number>();
    const members = {
      can_administer_channel_group: new Set<number>(),
      can_add_subscribers_group: new Set<number>(),
      can_subscribe_group: new Set<number>(),
    };
    const perUser: AccessFacts[] = [];
    let id = 0;
    for (const role of ORDER) {
      for (let combo = 0; combo < 16; combo++) {
        id++;
        users.push({ id, role: ROLES[role] });
        const f = facts(role, 'public', (combo & 1) !== 0);
        f.channel = channel;
        f.inChannel = {
          ...f.inChannel,
          can_administer_channel_group: (combo & 2) !== 0,
          can_add_subscribers_group: (combo & 4) !== 0,
          can_subscribe_group: (combo & 8) !== 0,
        };
        if (combo & 1) subscribers.add(id);
        if (combo & 2) members.can_administer_channel_group.add(id);
        if (combo & 4) members.can_add_subscribers_group.add(id);
        if (combo & 8) members.can_subscribe_group.add(id);
        perUser.push(f);
      }
    }
    const expected = users.filter((_, i) => hasMetadataAccess(perUser[i]!)).map((u) => u.id);
    const got = metadataAudience({
      channel,
      activeUsers: users,
      subscribers,
      groupMembers: (s) => members[s],
    });
    t.same(got, expected, `audience of ${JSON.stringify(channel)}`);
    checked += users.length;
  }
  t.equal(checked, 4 * 5 * 16);
  t.end();
});
