/**
 * POST /api/v1/submessage — an event of a widget message (a vote, a new poll option, a struck
 * task). Reference: views/submessage.py; the rules are in src/mutations/submessages.ts.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { int, str } from '../lib/params.js';
import { MAX_SUBMESSAGE_CONTENT_LENGTH } from '../lib/widgets.js';

export const addSubmessage = endpoint({
  method: 'POST',
  path: '/api/v1/submessage',
  params: z.object({
    message_id: int(),
    msg_type: str(),
    content: str({ max: MAX_SUBMESSAGE_CONTENT_LENGTH }),
  }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('submessage.add', {
      user_id: user.id,
      message_id: p.message_id,
      msg_type: p.msg_type,
      content: p.content,
    });
    return {};
  },
});
