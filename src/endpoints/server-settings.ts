/**
 * GET /api/v1/server_settings — no authentication. Reference: views/auth.py api_get_server_settings.
 * Realm-specific fields describe the realm at the request's subdomain and are omitted when no
 * realm is hosted there.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { realmIconUrl, realmUrl } from '../lib/urls.js';
import { renderedRealmDescription } from '../queries/render-context.js';
import { VERSION_FIELDS } from '../version.js';

export const getServerSettings = endpoint({
  method: 'GET',
  path: '/api/v1/server_settings',
  auth: 'none',
  params: z.object({}),
  handle: ({ server, realm }) => {
    const passwordAuth = realm ? realm.view.settings.password_auth_enabled : true;
    const out: Record<string, unknown> = {
      authentication_methods: {
        password: passwordAuth,
        dev: false,
        email: passwordAuth,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      ...VERSION_FIELDS,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: passwordAuth,
      require_email_format_usernames: true,
      // Confab's: whether the server sends mail (SMTP_URL; docs/mail.md), so that a client
      // offers e-mail invitations and the password reset link only when they can arrive.
      outgoing_mail_enabled: server.mailer !== null,
    };
    if (realm) {
      const url = realmUrl(server.config, realm.view.row.string_id);
      const row = realm.view.row;
      out.realm_url = url;
      out.realm_uri = url;
      out.realm_name = row.name;
      out.realm_icon = realmIconUrl(row, realm.view.settings);
      out.realm_description = renderedRealmDescription(server.config, server.store, realm.view);
      out.realm_web_public_access_enabled = realm.view.settings.enable_spectator_access;
    }
    return out;
  },
});
