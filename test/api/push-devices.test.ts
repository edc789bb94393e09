/**
 * Push device tokens over HTTP: registering and removing APNs and FCM tokens, the reference's
 * refusals, and that nothing else changes (this server sends no push notifications).
 * Reference tests: zerver/tests/test_push_notifications.py (PushNotificationTest,
 * test_register_device / test_remove_device).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';

const APNS = 'users/me/ios_push_device_token';
const FCM = 'users/me/android_gcm_reg_id';

t.test('APNs tokens: hexadecimal, with an app id; stored per user', async (t) => {
  const { api, server, fx } = await startServer(t);
  const q = await Listener.open(t, api, 'hamlet');
  const tokens = () =>
    server.store.accounts.pushDevicesOfUser(fx.users.hamlet!.id).map((d) => ({
      kind: d.kind,
      token: d.token,
      ios_app_id: d.ios_app_id,
    }));

  const token = 'c0ffee'.repeat(10);
  const body = assertSuccess(
    t,
    await api.post('hamlet', APNS, { token, appid: 'org.example.app' }),
  );
  assertMatchesOpenApi(t, `/${APNS}`, 'post', body);
  // Registering again is harmless.
  assertSuccess(t, await api.post('hamlet', APNS, { token, appid: 'org.example.app' }));
  t.same(tokens(), [{ kind: 1, token, ios_app_id: 'org.example.app' }]);

  assertError(t, await api.post('hamlet', APNS, { token }), "Missing 'appid' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(
    t,
    await api.post('hamlet', APNS, { token: '', appid: 'x' }),
    'Empty or invalid length token',
  );
  assertError(
    t,
    await api.post('hamlet', APNS, { token: 'a'.repeat(4098), appid: 'x' }),
    'Empty or invalid length token',
  );
  assertError(
    t,
    await api.post('hamlet', APNS, { token: 'xyz', appid: 'x' }),
    'Invalid APNS token',
  );
  assertError(
    t,
    await api.post('hamlet', APNS, { token: 'abc', appid: 'x' }),
    'Invalid APNS token',
  );
  assertError(t, await api.post('hamlet', APNS, { token, appid: 'org/evil' }), 'Invalid app ID');

  // Another user's token is theirs alone.
  assertError(t, await api.delete('othello', APNS, { token }), 'Token does not exist');
  const removed = assertSuccess(t, await api.delete('hamlet', APNS, { token }));
  assertMatchesOpenApi(t, `/${APNS}`, 'delete', removed);
  t.same(tokens(), []);
  assertError(t, await api.delete('hamlet', APNS, { token }), 'Token does not exist');
  assertError(t, await api.delete('hamlet', APNS, { token: '' }), 'Empty or invalid length token');
  t.same(await q.drain(t), [], 'no event: tokens are nobody else’s business');
});

t.test('FCM tokens: any non-empty string; APNs and FCM kept apart', async (t) => {
  const { api, server, fx } = await startServer(t);
  const token = 'fcm:token-with/any_characters';
  const body = assertSuccess(t, await api.post('cordelia', FCM, { token }));
  assertMatchesOpenApi(t, `/${FCM}`, 'post', body);
  assertError(t, await api.post('cordelia', FCM, { token: '' }), 'Empty or invalid length token');
  // The same string is not an APNs token of hers.
  assertError(t, await api.delete('cordelia', APNS, { token: 'abcd' }), 'Token does not exist');
  t.equal(server.store.accounts.pushDevicesOfUser(fx.users.cordelia!.id).length, 1);
  const removed = assertSuccess(t, await api.delete('cordelia', FCM, { token }));
  assertMatchesOpenApi(t, `/${FCM}`, 'delete', removed);
  assertError(t, await api.delete('cordelia', FCM, { token }), 'Token does not exist');

  // The server says it sends no push notifications.
  const settings = assertSuccess(t, await api.get(null, 'server_settings'));
  t.equal(settings.push_notifications_enabled, false);
});
