/**
 * Adding and removing alert words. Reference: actions/alert_words.py, lib/alert_words.py
 * (add_user_alert_words, remove_user_alert_words). Words compare case-insensitively: adding a
 * word the user has in any case changes nothing; among new words differing only in case, the
 * last spelling is kept. Every request, changed or not, sends the user an `alert_words` event with
 * their whole list, as the reference does.
 */
import { noteAlertWordsChanged } from '../queries/alert-words.js';
import type { MutationContext } from './context.js';

export type AlertWordsCommand = { user_id: number; alert_words: string[] };
export type AlertWordsResult = { alert_words: string[] };

function finish(ctx: MutationContext, userId: number, changed: boolean): AlertWordsResult {
  const words = ctx.store.alertWords.byUser(userId);
  ctx.emit({ type: 'alert_words', alert_words: words }, [userId]);
  if (changed) ctx.afterCommit(() => noteAlertWordsChanged(ctx.realm));
  return { alert_words: words };
}

/** `alert_words` were cleaned by the endpoint (trimmed, empty ones dropped). */
export function doAddAlertWords(ctx: MutationContext, cmd: AlertWordsCommand): AlertWordsResult {
  const existing = new Set(ctx.store.alertWords.byUser(cmd.user_id).map((w) => w.toLowerCase()));
  const toCreate = new Map<string, string>();
  for (const word of cmd.alert_words) {
    const lower = word.toLowerCase();
    if (!existing.has(lower)) toCreate.set(lower, word);
  }
  for (const word of toCreate.values())
    ctx.store.alertWords.insert(ctx.realm.id, cmd.user_id, word);
  return finish(ctx, cmd.user_id, toCreate.size > 0);
}

/** Removes each of the user's words equal to one of `alert_words`, ignoring case. */
export function doRemoveAlertWords(ctx: MutationContext, cmd: AlertWordsCommand): AlertWordsResult {
  const remove = new Set(cmd.alert_words.map((w) => w.toLowerCase()));
  let changed = false;
  for (const row of ctx.store.alertWords.rowsByUser(cmd.user_id)) {
    if (remove.has(row.word.toLowerCase())) {
      ctx.store.alertWords.remove(row.id);
      changed = true;
    }
  }
  return finish(ctx, cmd.user_id, changed);
}
