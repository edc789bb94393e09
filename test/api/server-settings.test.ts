/** GET /server_settings: no authentication, every field of the spec, realm chosen by Host. */
import t from 'tap';
import { assertSuccess, rawRequest } from '../helpers/api.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { SERVER_SETTINGS_EXTRAS } from '../helpers/spec-extras.js';
import { startServer } from '../helpers/server.js';
import { seedRealm } from '../helpers/fixtures.js';

t.test('server settings of the root realm', async (t) => {
  const { api } = await startServer(t);
  const res = await api.get(null, 'server_settings');
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/server_settings', 'get', res.body, {
    allowExtra: SERVER_SETTINGS_EXTRAS,
  });
  t.ok((body.service_feature_level as number) >= 388, 'feature level ≥ 388');
  t.type(body.service_version, 'string');
  t.equal(body.service_merge_base, '');
  t.match(body, {
    push_notifications_enabled: false,
    is_incompatible: false,
    email_auth_enabled: true,
    require_email_format_usernames: true,
    outgoing_mail_enabled: false,
    realm_url: 'http://testserver.local',
    realm_uri: 'http://testserver.local',
    realm_name: 'Zulip Dev',
    realm_web_public_access_enabled: false,
    external_authentication_methods: [],
  });
  t.match(body.authentication_methods, {
    password: true,
    email: true,
    ldap: false,
    'openid connect': false,
  });
  t.type(body.realm_icon, 'string');
});

t.test('the Host subdomain selects the realm; unknown subdomains omit realm fields', async (t) => {
  const { server, url } = await startServer(t);
  await seedRealm(server, 'eng');
  const eng = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/server_settings',
    headers: { host: 'eng.testserver.local' },
  });
  t.match(assertSuccess(t, eng), {
    realm_name: 'Realm eng',
    realm_url: 'http://eng.testserver.local',
  });
  const none = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/server_settings',
    headers: { host: 'nope.testserver.local' },
  });
  const body = assertSuccess(t, none);
  t.notOk('realm_name' in body, 'no realm fields');
  t.ok('service_feature_level' in body);
});
