/**
 * Mobile push device tokens (POST/DELETE /users/me/ios_push_device_token and
 * /users/me/android_gcm_reg_id). Stored so that clients can register and unregister as they do
 * with the reference; this server delivers no push notifications (`push_notifications_enabled`
 * is false), so nothing reads them yet. Reference: lib/push_notifications.py
 * (add_push_device_token, remove_push_device_token).
 */
import { JsonableError } from '../lib/errors.js';
import type { MutationContext } from './context.js';

export type PushDeviceCommand = {
  user_id: number;
  /** 1 APNs, 2 FCM (PushDeviceKind). */
  kind: number;
  token: string;
  ios_app_id?: string | null;
};

/** Registering a token the user already has changes nothing (as the reference). */
export function doAddPushDevice(
  ctx: MutationContext,
  cmd: PushDeviceCommand,
): Record<string, never> {
  ctx.store.accounts.addPushDevice({
    user_id: cmd.user_id,
    kind: cmd.kind,
    token: cmd.token,
    ios_app_id: cmd.ios_app_id ?? null,
    last_updated: ctx.now,
  });
  return {};
}

export function checkRemovePushDevice(
  ctx: MutationContext,
  cmd: PushDeviceCommand,
): PushDeviceCommand {
  const devices = ctx.store.accounts.pushDevicesOfUser(cmd.user_id);
  if (!devices.some((d) => d.kind === cmd.kind && d.token === cmd.token)) {
    throw new JsonableError('Token does not exist');
  }
  return cmd;
}

export function doRemovePushDevice(
  ctx: MutationContext,
  cmd: PushDeviceCommand,
): Record<string, never> {
  ctx.store.accounts.removePushDevice(cmd.user_id, cmd.kind, cmd.token);
  return {};
}
