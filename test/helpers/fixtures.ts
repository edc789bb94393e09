/**
 * The test realm, named after the reference's fixtures so its test cases read the same:
 * desdemona (owner), iago (administrator, may create users), shiva (moderator), hamlet, othello,
 * cordelia, prospero (members), polonius (guest). All at @zulip.com, each with password "secret-<name>".
 * Created through the same mutations the API runs; the realm's notification bot comes with it.
 */
import { nowSeconds } from '../../src/config.js';
import type { ConfabServer } from '../../src/server.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { NOTIFICATION_BOT_EMAIL } from '../../src/lib/notices.js';
import { WELCOME_BOT } from '../../src/lib/welcome.js';
import { hashPassword } from '../../src/lib/password.js';
import { Role } from '../../src/lib/roles.js';
import { insertUserRow } from '../../src/mutations/users.js';

export type FixtureUser = {
  id: number;
  email: string;
  api_key: string;
  password: string;
  role: Role;
};

export type Fixture = {
  realmId: number;
  users: Record<string, FixtureUser>;
  /** The realm's notification bot (every realm has one from creation). */
  notificationBotId: number;
};

export const FIXTURE_USERS: readonly [string, Role][] = [
  ['iago', 200],
  ['shiva', 300],
  ['hamlet', 400],
  ['othello', 400],
  ['cordelia', 400],
  ['prospero', 400],
  ['polonius', 600],
];

export async function seedRealm(server: ConfabServer, stringId = ''): Promise<Fixture> {
  const { realms, config } = server.context;
  const store = server.store;
  const password = (name: string) => `secret-${name}`;
  const now = nowSeconds(config);
  const args = {
    name: stringId === '' ? 'Zulip Dev' : `Realm ${stringId}`,
    string_id: stringId,
    owner_email: 'desdemona@zulip.com',
    owner_full_name: 'Desdemona',
    owner_password_hash: await hashPassword(password('desdemona'), config.scryptN),
    owner_can_create_users: false,
    now,
  };
  // On a cluster node (CONFAB_TEST_CLUSTER, cluster-server.ts) the realm's rows, written outside
  // the realm actor, reach the other nodes as the first entry of its log, and this node owns it.
  const owner = server.cluster
    ? await server.cluster.addRealm(stringId, () => doCreateRealm(store, args))
    : doCreateRealm(store, args);
  realms.noteRealmCreated(owner.realm_id);
  const realm = realms.get(owner.realm_id)!;
  const users: Record<string, FixtureUser> = {
    desdemona: {
      id: owner.user_id,
      email: owner.email,
      api_key: owner.api_key,
      password: password('desdemona'),
      role: 100,
    },
  };
  for (const [name, role] of FIXTURE_USERS) {
    const email = `${name}@zulip.com`;
    const r = await realm.ask('user.create', {
      acting_user_id: null,
      email,
      full_name: name[0]!.toUpperCase() + name.slice(1),
      password_hash: await hashPassword(password(name), config.scryptN),
      role,
      can_create_users: name === 'iago',
      // The fixture's accounts stand for accounts older than the test: no welcome message.
      welcome: null,
    });
    users[name] = { id: r.user_id, email, api_key: r.api_key, password: password(name), role };
  }
  const bot = realm.view.userByEmail(NOTIFICATION_BOT_EMAIL)!;
  return { realmId: owner.realm_id, users, notificationBotId: bot.id };
}

/**
 * Gives the fixture realm its Welcome Bot, which every realm the server sets up has
 * (src/realm-setup.ts) and the fixture's lacks: without it, the first account a test creates
 * brings the bot too (src/mutations/welcome.ts), with its own events. For tests that count the
 * events of an account's creation.
 */
export async function addWelcomeBot(server: ConfabServer, fx: Fixture): Promise<number> {
  const realm = server.context.realms.get(fx.realmId)!;
  return (await realm.ask('user.system_bot.ensure', WELCOME_BOT)).user_id;
}

/** Every active user of the fixture realm (the notification bot too), ascending. */
export function activeUserIds(fx: Fixture): number[] {
  return [...Object.values(fx.users).map((u) => u.id), fx.notificationBotId].sort((a, b) => a - b);
}

/**
 * `count` members added to a realm at once, written as user creation writes them (no events, no
 * password): `member<i>@example.com`. For tests that need a large realm fast. Their ids.
 */
export function insertMembers(server: ConfabServer, realmId: number, count: number): number[] {
  const store = server.store;
  const now = nowSeconds(server.context.config);
  const made = store.transaction(() =>
    Array.from({ length: count }, (_, i) =>
      insertUserRow(store, realmId, {
        email: `member${i}@example.com`,
        full_name: `Member ${i}`,
        password_hash: null,
        api_key: `memberkey${String(i).padStart(23, '0')}`,
        role: Role.MEMBER,
        now,
        waitingPeriodDays: 0,
      }),
    ),
  );
  const view = server.context.realms.get(realmId)!.view;
  for (const id of made) view.reloadUser(id);
  return made;
}
