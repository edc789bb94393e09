/**
 * POST /api/v1/messages/render — the HTML a message would get (compose preview). Reference:
 * views/message_send.py render_message_backend. Rendering uses the realm's current context and
 * the caller's options (`translate_emoticons`; channel links only to channels the caller has
 * content access to); long content goes to the render workers.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { str } from '../lib/params.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';

export const renderMessage = endpoint({
  method: 'POST',
  path: '/api/v1/messages/render',
  params: z.object({ content: str() }),
  handle: async ({ server, realm, user }, p) => {
    const context = renderContextFor(server.config, server.store, realm.view);
    const result = await server.renderer.render(
      p.content,
      context,
      renderOptionsFor(server.store, realm.view, user.id, p.content),
    );
    return { rendered: result.rendered_content };
  },
});
