/**
 * A cluster's realm as the tests use it (test/cluster): no fixture seeding there, so its owner and
 * two members, hamlet and othello, made through the API (through the front proxy at `url`; the
 * realm chosen by `headers`' Host).
 */
import { ApiClient, type ApiResponse } from './api.js';
import type { Fixture } from './fixtures.js';

/**
 * A request asked again while a node answers that it is catching up with the cluster (its read
 * barrier timed out: a loaded machine; nothing was done), as a client would; for up to 60 s.
 */
async function served(ask: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let i = 0; ; i++) {
    const res = await ask();
    if (res.status !== 503 || !/catching up/.test(res.text) || i >= 120) return res;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function clusterRealmFixture(
  url: string,
  headers: Record<string, string>,
  owner: { email: string; api_key: string; password: string },
  realmId = 0,
): Promise<Fixture> {
  const proxy = new ApiClient(url, { realmId: 0, users: {}, notificationBotId: 0 }, headers);
  const users: Fixture['users'] = {
    owner: { id: 0, ...owner, role: 100 },
  };
  const domain = owner.email.split('@')[1]!;
  for (const name of ['hamlet', 'othello']) {
    const email = `${name}@${domain}`;
    const password = `secret-${name}`;
    const created = await served(() =>
      proxy.post(owner, 'users', { email, password, full_name: name }),
    );
    if (created.status !== 200) throw new Error(`creating ${name}: ${created.text}`);
    const key = await served(() =>
      proxy.post(null, 'fetch_api_key', { username: email, password }),
    );
    if (key.status !== 200) throw new Error(`api key of ${name}: ${key.text}`);
    users[name] = {
      id: created.body.user_id as number,
      email,
      api_key: key.body.api_key as string,
      password,
      role: 400,
    };
  }
  return { realmId, users, notificationBotId: 0 };
}
