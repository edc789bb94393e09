/**
 * Incoming webhooks: POST /api/v1/external/{integration}. Reference: zerver/decorator.py
 * (webhook_view), zerver/lib/webhooks/common.py (check_send_webhook_message), the views under
 * zerver/webhooks/. docs/integrations.md "Incoming webhooks".
 *
 * The sender authenticates with its API key — `?api_key=` as the services' webhook settings put
 * it in the URL, or HTTP Basic — usually an incoming-webhook bot's. `stream` (a channel name or
 * id) and `topic` choose where the message goes (`topic` replaces the one the integration
 * chooses); without `stream` it goes to the bot's owner as a direct message. The payload (the
 * body, JSON; or a form whose `payload` field is the JSON, as Slack's tools send it) becomes the
 * integration's message(s), then goes through the same send path as POST /messages: the bot may
 * post only where its role and the channel's permissions let it.
 */
import { z } from 'zod';
import { endpoint, type HandlerCtx } from '../http/endpoint.js';
import { JsonableError, UnauthorizedError } from '../lib/errors.js';
import { parseJson } from '../lib/json.js';
import {
  normalizeContent,
  normalizeTopic,
  parseChannelTo,
  preparedContent,
  type MessageDestination,
} from '../lib/message-content.js';
import { ownNulRule } from '../lib/params.js';
import { INTEGRATIONS } from '../lib/webhooks/index.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';
import type { UserRow } from '../storage/users.js';

/** The sender: the request's authenticated user, or the account whose key is `api_key`. */
function webhookSender(ctx: HandlerCtx, apiKey: string | undefined): UserRow {
  if (ctx.user !== null) return ctx.user;
  const realm = ctx.realm;
  if (apiKey === undefined || apiKey === '')
    throw new UnauthorizedError('Missing api_key parameter.');
  const user = ctx.server.store.users.byApiKey(apiKey);
  if (!realm || !user || user.realm_id !== realm.id) throw new UnauthorizedError('Invalid API key');
  if (!user.is_active) throw new UnauthorizedError('Account is deactivated');
  if (realm.view.deactivated) throw new UnauthorizedError('This organization has been deactivated');
  return realm.view.user(user.id) ?? user;
}

/** The body as the integration's payload: JSON, or a form (its `payload` field as JSON). */
function payloadOf(ctx: HandlerCtx): unknown {
  const body = ctx.req.rawBody ?? Buffer.alloc(0);
  const type = ctx.req.contentType.split(';', 1)[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  const parse = (s: string) => {
    try {
      return parseJson(s);
    } catch {
      throw new JsonableError('Malformed JSON', { code: 'INVALID_JSON' });
    }
  };
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const payload = form.get('payload');
    return payload === null ? Object.fromEntries(form) : parse(payload);
  }
  if (text.trim() === '') return {};
  return parse(text);
}

/** POST /api/v1/external/{integration} */
export const incomingWebhook = endpoint({
  method: 'POST',
  path: '/api/v1/external/:integration',
  auth: 'optional',
  rawBody: true,
  incomingWebhookBots: true,
  headers: ['x-github-event', 'x-gitlab-event'],
  params: z.object({
    integration: z.string(),
    api_key: z.string().optional(),
    stream: z.string().optional(),
    topic: ownNulRule(z.string()).optional(), // normalizeTopic
    // Alertmanager: the label that names the topic and the one that describes an alert.
    name: z.string().optional(),
    desc: z.string().optional(),
  }),
  handle: async (ctx, p) => {
    const integration = INTEGRATIONS.get(p.integration);
    if (!integration)
      throw new JsonableError(`Unknown integration '${p.integration}'`, {
        code: 'NOT_FOUND',
        status: 404,
      });
    const { server } = ctx;
    const sender = webhookSender(ctx, p.api_key);
    const realm = ctx.realm!;
    const query: Record<string, string> = {};
    if (p.name !== undefined) query.name = p.name;
    if (p.desc !== undefined) query.desc = p.desc;
    const messages = integration.handle({
      payload: payloadOf(ctx),
      headers: ctx.req.headers,
      query,
    });
    const client = `Zulip${integration.displayName}Webhook`;
    const context = renderContextFor(server.config, server.store, realm.view);
    for (const m of messages) {
      let to: MessageDestination;
      if (p.stream !== undefined && p.stream !== '') {
        to = {
          kind: 'channel',
          channel: parseChannelTo(p.stream),
          topic: normalizeTopic(p.topic ?? m.topic),
        };
      } else {
        // No channel: the bot's owner gets it as a direct message (a person's key: themselves).
        to = { kind: 'direct', ids: [sender.bot_owner_id ?? sender.id] };
      }
      const content = normalizeContent(m.content);
      const r = await server.renderer.render(
        content,
        context,
        renderOptionsFor(server.store, realm.view, sender.id, content),
      );
      await realm.ask('message.send', {
        sender_id: sender.id,
        to,
        ...preparedContent(content, r),
        client,
        read_by_sender: false,
        queue_id: undefined,
        local_id: undefined,
      });
    }
    return {};
  },
});
