/**
 * New accounts as the API and a browser make them, for tests of what an account's creation does
 * (its history, the Welcome Bot's messages, the signup notices): POST /users, an invitation link's
 * form, and logging in as the result.
 */
import type { Test } from 'tap';
import { assertSuccess, formEncode, rawRequest, type ApiClient } from './api.js';
import type { TestServer } from './server.js';

/** The fixture realm's host, as invitation links name it. */
export const INVITE_HOST = 'testserver.local';

export type NewAccount = { email: string; api_key: string; user_id: number };

/** Logs in with a password (POST /fetch_api_key): the account's API key and id. */
export async function login(
  t: Test,
  api: ApiClient,
  email: string,
  password: string,
): Promise<NewAccount> {
  const body = assertSuccess(
    t,
    await api.post(null, 'fetch_api_key', { username: email, password }),
    `${email} logs in`,
  );
  return { email, api_key: body.api_key as string, user_id: body.user_id as number };
}

/** Creates an account with POST /users (iago) and logs in as it. */
export async function createByApi(
  t: Test,
  api: ApiClient,
  email: string,
  fullName = 'New Person',
): Promise<NewAccount> {
  const password = 'pw-123456';
  assertSuccess(t, await api.post('iago', 'users', { email, password, full_name: fullName }));
  return login(t, api, email, password);
}

/**
 * Submits an invitation link's form, as a browser does, and logs in as the new account;
 * `askEmail`: a reusable link's form asks for the address (an e-mail invitation's has it).
 */
export async function acceptInvitation(
  t: Test,
  ts: TestServer,
  link: string,
  email: string,
  askEmail: boolean,
  fullName = 'Invited Person',
): Promise<NewAccount> {
  const form: Record<string, string> = { full_name: fullName, password: 'pw-invited' };
  if (askEmail) form.email = email;
  const body = formEncode(form);
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: new URL(link).pathname,
    headers: {
      host: INVITE_HOST,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
  t.equal(res.status, 303, 'the account is created', { body: res.text.slice(0, 300) });
  return login(t, ts.api, email, 'pw-invited');
}

/** The link of the (only) pending e-mail invitation to `email` in the fixture realm. */
export function invitationLink(ts: TestServer, email: string): string {
  const row = ts.server.store.invitations
    .validByRealm(ts.fx.realmId, Math.floor(Date.now() / 1000))
    .find((r) => r.email === email);
  if (!row) throw new Error(`no pending invitation for ${email}`);
  return `http://${INVITE_HOST}/accounts/do_confirm/${row.confirmation_key}/`;
}
