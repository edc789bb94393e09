/**
 * POST and DELETE /api/v1/messages/{message_id}/reactions. Reference: views/reactions.py; the
 * rules are in src/mutations/reactions.ts.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { ownNulRule, pathInt, reactionType, str } from '../lib/params.js';

export const addReaction = endpoint({
  method: 'POST',
  path: '/api/v1/messages/:message_id/reactions',
  params: z.object({
    message_id: pathInt(),
    // The emoji's own checks answer a NUL with the reference's words ("Emoji '…' does not exist").
    emoji_name: ownNulRule(str()),
    emoji_code: ownNulRule(str()).optional(),
    reaction_type: reactionType().optional(),
  }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('reaction.add', {
      user_id: user.id,
      message_id: p.message_id,
      emoji_name: p.emoji_name,
      emoji_code: p.emoji_code,
      reaction_type: p.reaction_type,
    });
    return {};
  },
});

export const removeReaction = endpoint({
  method: 'DELETE',
  path: '/api/v1/messages/:message_id/reactions',
  params: z.object({
    message_id: pathInt(),
    emoji_name: ownNulRule(str()).optional(),
    emoji_code: ownNulRule(str()).optional(),
    reaction_type: reactionType().default('unicode_emoji'),
  }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('reaction.remove', {
      user_id: user.id,
      message_id: p.message_id,
      emoji_name: p.emoji_name,
      emoji_code: p.emoji_code,
      reaction_type: p.reaction_type,
    });
    return {};
  },
});
