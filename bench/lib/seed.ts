/**
 * Seeding a bench's server: a fresh server on an ephemeral port with a temporary data directory,
 * one realm with `n` members written in one transaction (no password hashing, fixed API keys),
 * and channels created through the realm actor like any subscription request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role } from '../../src/lib/roles.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { insertUserRow } from '../../src/mutations/users.js';
import { createServer, type ConfabServer, type ServerOptions } from '../../src/server.js';

export type BenchUser = { id: number; email: string; api_key: string };

export type BenchServer = {
  server: ConfabServer;
  users: BenchUser[];
  realmId: number;
  dataDir: string;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
};

/**
 * `role(i)` gives user i's role (default: every user a member); `server` adds options to the
 * server's (a test clock, an event tap, …); `dataDir`: an empty data directory to use instead of a
 * new temporary one. User i is `user<i>@bench.example` with API key
 * `benchkey<i, 24 digits>`, so client processes can derive them from the index.
 */
export async function serverWithUsers(
  n: number,
  tag: string,
  opts: { role?: (i: number) => Role; server?: ServerOptions; dataDir?: string } = {},
): Promise<BenchServer> {
  const role = opts.role ?? (() => Role.MEMBER);
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `confab-bench-${tag}-`));
  const server = await createServer({
    port: 0,
    dataDir,
    scryptN: 1024,
    rateLimits: null,
    ...opts.server,
  });
  const { realms } = server.context;
  const store = server.store;
  const now = Math.floor(Date.now() / 1000);
  const owner = doCreateRealm(store, {
    name: 'Bench',
    string_id: '',
    owner_email: 'owner@bench.example',
    owner_full_name: 'Owner',
    owner_password_hash: null,
    owner_can_create_users: false,
    now,
  });
  realms.noteRealmCreated(owner.realm_id);
  const users: BenchUser[] = [];
  store.transaction(() => {
    for (let i = 0; i < n; i++) {
      const api_key = `benchkey${String(i).padStart(24, '0')}`;
      const email = `user${i}@bench.example`;
      const id = insertUserRow(store, owner.realm_id, {
        email,
        full_name: `User ${i}`,
        password_hash: null,
        api_key,
        role: role(i),
        now,
        waitingPeriodDays: 0,
      });
      users.push({ id, email, api_key });
    }
  });
  return {
    server,
    users,
    realmId: owner.realm_id,
    dataDir,
    close: async () => {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A channel `name` created by `creator` with `principals` subscribed; returns its id. */
export async function createChannel(
  server: ConfabServer,
  realmId: number,
  creator: number,
  name: string,
  principals: number[],
  inviteOnly = false,
): Promise<number> {
  const rt = server.context.realms.get(realmId)!;
  await rt.ask('channel.subscribe', {
    acting_user_id: creator,
    subscriptions: [{ name, description: null, rendered_description: null, color: null }],
    principals,
    authorization_errors_fatal: true,
    invite_only: inviteOnly,
    is_web_public: false,
    is_default_stream: false,
    history_public_to_subscribers: null,
    message_retention_days: null,
    retention_given: false,
    topics_policy: null,
    folder_id: null,
    settings: {},
  });
  return rt.view.channels.byName(name)!.id;
}

/** Channel c's subscribers in the 2000-user benches: its creator and a spread of up to 50. */
export function principalsOf(ids: readonly number[], c: number, creator: number): number[] {
  const principals = new Set([creator]);
  for (let k = 0; principals.size < Math.min(50, ids.length); k++)
    principals.add(ids[(c * 131 + k * 37) % ids.length]!);
  return [...principals];
}
