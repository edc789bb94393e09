/**
 * POST /register in a large realm, for a client that takes gzip: the user lists are shared between
 * registers and compressed once, in segments (src/http/gzip.ts), also for a member whose own entry
 * is spliced into them (their own delivery_email, which their role would not show them); the
 * answer reads back to exactly the uncompressed one and matches the OpenAPI description.
 */
import zlib from 'node:zlib';
import t from 'tap';
import { SEGMENT } from '../../src/http/gzip.js';
import { assertSuccess, gzipPost } from '../helpers/api.js';
import { insertMembers } from '../helpers/fixtures.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';

t.test('a large realm’s register goes gzipped, spliced lists included', async (t) => {
  const { server, fx, api, url } = await startServer(t);
  insertMembers(server, fx.realmId, 600);
  // Hamlet's address is visible to nobody: his own entry is spliced into the members' lists.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 4 }));
  const hamlet = fx.users.hamlet!;
  const plain = assertSuccess(t, await api.post('hamlet', 'register', {}));
  const users = plain.realm_users as { user_id: number; delivery_email?: string }[];
  t.ok(users.length > 600, 'every active user');
  t.equal(users.find((u) => u.user_id === hamlet.id)?.delivery_email, hamlet.email, 'his own');
  t.ok(Buffer.byteLength(JSON.stringify(users)) > 4 * SEGMENT, 'the lists span many segments');

  // Until the lists' compression is done (zlib's thread pool), registers go as they are.
  let raw: Awaited<ReturnType<typeof gzipPost>> | null = null;
  // (Bounded by time, not by tries: on a loaded machine the pool's threads wait for a core.)
  for (
    const start = Date.now();
    Date.now() - start < 60_000 && raw?.headers['content-encoding'] !== 'gzip';
  ) {
    if (raw) await new Promise((r) => setTimeout(r, 20));
    raw = await gzipPost(url, hamlet, 'register', {});
    const id = (raw.headers['content-encoding'] === 'gzip' ? null : JSON.parse(raw.body.toString()))
      ?.queue_id as string | undefined;
    if (id) assertSuccess(t, await api.delete('hamlet', 'events', { queue_id: id }));
  }
  t.equal(raw!.headers['content-encoding'], 'gzip', 'gzipped');
  t.equal(raw!.headers.vary, 'Accept-Encoding');
  const text = zlib.gunzipSync(raw!.body);
  t.ok(raw!.body.length * 3 < text.length, `${raw!.body.length} of ${text.length} bytes`);
  const body = JSON.parse(text.toString()) as Record<string, unknown>;
  assertMatchesOpenApi(t, '/register', 'post', body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.same(body.realm_users, plain.realm_users, 'the same users, his own entry spliced in');
  t.same(body.realm_non_active_users, plain.realm_non_active_users);
  t.not(body.queue_id, plain.queue_id, 'a register of its own');

  // Another member, without a splice, gets the same lists but for Hamlet's entry.
  const cordelia = fx.users.cordelia!;
  const other = await gzipPost(url, cordelia, 'register', {});
  t.equal(other.headers['content-encoding'], 'gzip');
  const seen = JSON.parse(zlib.gunzipSync(other.body).toString()) as typeof plain;
  const theirs = seen.realm_users as typeof users;
  t.not(theirs.find((u) => u.user_id === hamlet.id)?.delivery_email, hamlet.email, 'not shown');
  t.same(
    theirs.filter((u) => u.user_id !== hamlet.id),
    users.filter((u) => u.user_id !== hamlet.id),
  );
});
