/**
 * Rules of push device registration that do not depend on the realm's data. Reference:
 * lib/push_notifications.py (validate_token), models/push_notifications.py (PushDeviceToken.kind).
 */
import { JsonableError } from './errors.js';
import { longerThan } from './strings.js';

/** How a device is reached (stored as `push_devices.kind`). */
export const PushDeviceKind = { APNS: 1, FCM: 2 } as const;

const MAX_TOKEN_LENGTH = 4096;

/** An APNs token is hexadecimal: pairs of hex digits, blanks allowed between pairs. */
const APNS_TOKEN = /^\s*(?:[0-9a-fA-F]{2}\s*)*$/;

/** A token as the reference accepts it: not empty, not too long; APNs tokens hexadecimal. */
export function validateToken(token: string, kind: number): void {
  if (token === '' || longerThan(token, MAX_TOKEN_LENGTH))
    throw new JsonableError('Empty or invalid length token');
  if (kind === PushDeviceKind.APNS && !APNS_TOKEN.test(token))
    throw new JsonableError('Invalid APNS token');
}
