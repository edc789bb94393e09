/**
 * Mobile push device registration: POST/DELETE /users/me/ios_push_device_token (APNs) and
 * POST/DELETE /users/me/android_gcm_reg_id (FCM). Reference: views/push_notifications.py,
 * lib/push_notifications.py validate_token.
 *
 * Tokens are stored (migration 0007) so that mobile clients register and unregister as with the
 * reference, but this server delivers no push notifications: `push_notifications_enabled` is false
 * in GET /server_settings and register, and no sender reads the tokens yet.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { HumanUsersOnlyError, JsonableError } from '../lib/errors.js';
import { str } from '../lib/params.js';
import { PushDeviceKind, validateToken } from '../lib/push-devices.js';

const APP_ID = /^[.a-zA-Z0-9-]+$/;

/** POST /api/v1/users/me/ios_push_device_token */
export const addApnsDeviceToken = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/ios_push_device_token',
  params: z.object({ token: str(), appid: str() }),
  handle: async ({ realm, user }, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    validateToken(p.token, PushDeviceKind.APNS);
    if (!APP_ID.test(p.appid)) throw new JsonableError('Invalid app ID');
    await realm.ask('user.push_device.add', {
      user_id: user.id,
      kind: PushDeviceKind.APNS,
      token: p.token,
      ios_app_id: p.appid,
    });
    return {};
  },
});

/** DELETE /api/v1/users/me/ios_push_device_token */
export const removeApnsDeviceToken = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/ios_push_device_token',
  params: z.object({ token: str() }),
  handle: async ({ realm, user }, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    validateToken(p.token, PushDeviceKind.APNS);
    await realm.ask('user.push_device.remove', {
      user_id: user.id,
      kind: PushDeviceKind.APNS,
      token: p.token,
    });
    return {};
  },
});

/** POST /api/v1/users/me/android_gcm_reg_id */
export const addAndroidRegId = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/android_gcm_reg_id',
  params: z.object({ token: str() }),
  handle: async ({ realm, user }, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    validateToken(p.token, PushDeviceKind.FCM);
    await realm.ask('user.push_device.add', {
      user_id: user.id,
      kind: PushDeviceKind.FCM,
      token: p.token,
    });
    return {};
  },
});

/** DELETE /api/v1/users/me/android_gcm_reg_id */
export const removeAndroidRegId = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/android_gcm_reg_id',
  params: z.object({ token: str() }),
  handle: async ({ realm, user }, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    validateToken(p.token, PushDeviceKind.FCM);
    await realm.ask('user.push_device.remove', {
      user_id: user.id,
      kind: PushDeviceKind.FCM,
      token: p.token,
    });
    return {};
  },
});
