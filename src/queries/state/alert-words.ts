/** Register snapshot, `alert_words` type: the user's alert words, in the order added. */
import type { StateContributor } from '../initial-state.js';

export const alertWordsState: StateContributor = {
  types: ['alert_words'],
  fill(req, state) {
    state.alert_words = req.user === null ? [] : req.store.alertWords.byUser(req.user.id);
  },
};
