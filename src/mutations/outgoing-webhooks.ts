/**
 * The outgoing-webhook queue's side of the realm actor (docs/integrations.md "Outgoing webhooks"):
 * the caller (src/bots/outgoing-webhooks.ts) reports a call done, and it leaves the queue; calls
 * are written by the send itself (src/mutations/messages.ts queueServiceBots).
 */
import type { MutationContext } from './context.js';

export function doOutgoingWebhookDone(
  ctx: MutationContext,
  cmd: { message_id: number; bot_id: number },
): { removed: boolean } {
  return { removed: ctx.store.outgoingWebhookCalls.remove(cmd.message_id, cmd.bot_id) };
}
