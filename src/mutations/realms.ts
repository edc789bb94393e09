/**
 * Creating a realm: the realm row, its system groups (with the subgroup chain), its first owner,
 * and its notification bot (the sender of the server's own messages: src/mutations/internal-send.ts). Runs outside any realm actor (the realm does not exist yet), in one transaction of its own;
 * callers: the server's first boot and the `manage create-realm` command.
 */
import { JsonableError } from '../lib/errors.js';
import { NOTIFICATION_BOT_EMAIL, NOTIFICATION_BOT_NAME } from '../lib/notices.js';
import {
  BotType,
  Role,
  SYSTEM_GROUP_CHAIN,
  SYSTEM_GROUP_DESCRIPTIONS,
  SystemGroup,
} from '../lib/roles.js';
import type { AuditOrigin } from '../lib/audit.js';
import { generateApiKey } from '../lib/password.js';
import type { NewAuditRow } from '../storage/audit.js';
import type { Store } from '../storage/store.js';
import { auditRow, logAudit } from './audit.js';
import { insertUserRow } from './users.js';

export type CreateRealmParams = {
  name: string;
  string_id: string;
  description?: string;
  owner_email: string;
  owner_full_name: string;
  owner_password_hash: string | null;
  /** Whether the owner may create users through the API (POST /users). */
  owner_can_create_users: boolean;
  now: number;
  /** Who creates it (the audit log's `realm_created` row; absent: the server itself). */
  audit_origin?: AuditOrigin;
};

export type CreateRealmResult = {
  realm_id: number;
  user_id: number;
  email: string;
  api_key: string;
};

const SUBDOMAIN_RE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)?$/;

export function checkSubdomain(stringId: string): void {
  if (!SUBDOMAIN_RE.test(stringId)) {
    throw new JsonableError("Subdomain can only have lowercase letters, numbers, and '-'s.");
  }
}

/** A realm has the subdomain already (here, or on a cluster: src/cluster/subdomains.ts). */
export function subdomainInUse(): JsonableError {
  return new JsonableError('Subdomain is already in use. Please choose a different one.');
}

/** The subdomain's form (the refusal that needs no state; see doCreateRealm for the other). */
export function checkCreateRealm(p: CreateRealmParams): CreateRealmParams {
  checkSubdomain(p.string_id);
  return p;
}

/** Creates a realm after checkCreateRealm (callers that pass fixed, valid subdomains skip it). */
export function doCreateRealm(store: Store, p: CreateRealmParams): CreateRealmResult {
  let audit: NewAuditRow | null = null;
  const created = store.transaction(() => {
    // Refused inside the transaction: no realm actor serializes realm creation, so whether the
    // subdomain is taken is only known for sure in the transaction that takes it.
    if (store.realms.byStringId(p.string_id)) throw subdomainInUse();
    const realmId = store.realms.insert({
      string_id: p.string_id,
      name: p.name,
      description: p.description ?? '',
      date_created: p.now,
      settings: '{}',
    });

    const ids = new Map<string, number>();
    for (const name of [...SYSTEM_GROUP_CHAIN, SystemGroup.NOBODY]) {
      ids.set(
        name,
        store.groups.insert({
          realm_id: realmId,
          name,
          description: SYSTEM_GROUP_DESCRIPTIONS[name],
          is_system_group: 1,
          creator_id: null,
          date_created: p.now,
          settings: '{}',
        }),
      );
    }
    for (let i = 0; i + 1 < SYSTEM_GROUP_CHAIN.length; i++) {
      store.groups.addSubgroup(
        ids.get(SYSTEM_GROUP_CHAIN[i]!)!,
        ids.get(SYSTEM_GROUP_CHAIN[i + 1]!)!,
      );
    }

    const apiKey = generateApiKey();
    const userId = insertUserRow(store, realmId, {
      email: p.owner_email,
      full_name: p.owner_full_name,
      password_hash: p.owner_password_hash,
      api_key: apiKey,
      role: Role.OWNER,
      can_create_users: p.owner_can_create_users,
      now: p.now,
      waitingPeriodDays: 0,
    });
    insertUserRow(store, realmId, {
      email: NOTIFICATION_BOT_EMAIL,
      full_name: NOTIFICATION_BOT_NAME,
      password_hash: null,
      api_key: generateApiKey(),
      role: Role.MEMBER,
      is_bot: true,
      bot_type: BotType.DEFAULT,
      now: p.now,
      waitingPeriodDays: 0,
    });
    audit = auditRow(realmId, p.now, p.audit_origin, {
      event_type: 'realm_created',
      modified_user_id: userId,
      extra: { name: p.name, string_id: p.string_id, owner_email: p.owner_email },
    });
    store.audit.insert(audit);
    return { realm_id: realmId, user_id: userId, email: p.owner_email, api_key: apiKey };
  });
  if (audit !== null && !store.inTransaction) logAudit(audit);
  return created;
}
