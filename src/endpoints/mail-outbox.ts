/**
 * GET /api/v1/mail/outbox — Confab's own (docs/api.md "Mail outbox"): the realm's mail waiting for
 * the SMTP server, for its administrators (the web app's outbox view; `manage outbox` shows every
 * realm's). Never the bodies: a password reset's link is a secret of its recipient's.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { OrganizationAdministratorRequiredError } from '../lib/errors.js';
import { intValue, json } from '../lib/params.js';
import { Role } from '../lib/roles.js';

/** Mails one answer lists at most. */
export const MAX_OUTBOX_LIST = 1000;

export const getMailOutbox = endpoint({
  method: 'GET',
  path: '/api/v1/mail/outbox',
  params: z.object({
    limit: json(
      intValue()
        .min(1, { error: '{var} is too small' })
        .max(MAX_OUTBOX_LIST, { error: '{var} is too large' }),
    ).default(100),
  }),
  handle: ({ server, realm, user }, p) => {
    if (user.is_bot || user.role > Role.ADMINISTRATOR)
      throw new OrganizationAdministratorRequiredError();
    const store = server.store;
    return {
      outgoing_mail_enabled: server.config.smtpUrl !== null,
      count: store.mail.countOfRealm(realm.id),
      mails: store.mail.listOfRealm(realm.id, p.limit).map((m) => ({
        id: m.id,
        kind: m.kind,
        recipient: m.recipient,
        subject: m.subject,
        created_at: m.created_at,
        attempts: m.attempts,
        next_attempt_at: m.next_attempt_at,
        last_error: m.last_error,
      })),
    };
  },
});
