/**
 * Alert words. Reference: views/alert_words.py (list_alert_words, add_alert_words,
 * remove_alert_words). Adding trims each word and ignores empty ones; a word may have at most 100
 * characters. Removing takes the words as given. Both answer the user's whole list.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { codePointLength } from '../lib/strings.js';
import { json } from '../lib/params.js';
import { userAlertWords } from '../queries/alert-words.js';

export const MAX_ALERT_WORD_LENGTH = 100;

const word = () => z.string({ error: '{var} is not a string' });
const wordList = (item: z.ZodType<string>) => json(z.array(item, { error: '{var} is not a list' }));

/** GET /api/v1/users/me/alert_words */
export const listAlertWords = endpoint({
  method: 'GET',
  path: '/api/v1/users/me/alert_words',
  params: z.object({}),
  handle: ({ server, user }) => ({ alert_words: userAlertWords(server.store, user.id) }),
});

/** POST /api/v1/users/me/alert_words */
export const addAlertWords = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/alert_words',
  params: z.object({
    alert_words: wordList(
      word().refine((w) => codePointLength(w) <= MAX_ALERT_WORD_LENGTH, {
        error: `{var} is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`,
      }),
    ),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('alert_words.add', {
      user_id: user.id,
      alert_words: p.alert_words.map((w) => w.trim()).filter((w) => w !== ''),
    }),
});

/** DELETE /api/v1/users/me/alert_words */
export const removeAlertWords = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/alert_words',
  params: z.object({ alert_words: wordList(word()) }),
  handle: ({ realm, user }, p) =>
    realm.ask('alert_words.remove', { user_id: user.id, alert_words: p.alert_words }),
});
