/**
 * Code playgrounds: per-language links that open a code block in an external playground.
 * Reference: views/realm_playgrounds.py, actions/realm_playgrounds.py, models (RealmPlayground).
 * The values were checked by the endpoint (src/lib/playgrounds.ts); uniqueness is checked here.
 * Every change sends the whole list (`realm_playgrounds`) to every active user.
 */
import { JsonableError } from '../lib/errors.js';
import { checkRealmAdministrator } from '../lib/user-rules.js';
import type { PlaygroundRow } from '../storage/playgrounds.js';
import type { MutationContext } from './context.js';

function emitPlaygrounds(ctx: MutationContext): void {
  ctx.emit(
    { type: 'realm_playgrounds', realm_playgrounds: ctx.store.playgrounds.byRealm(ctx.realm.id) },
    ctx.realm.activeUsers().map((u) => u.id),
  );
}

type AddPlaygroundCommand = Omit<PlaygroundRow, 'id'> & { acting_user_id: number };

export function checkAddPlayground(
  ctx: MutationContext,
  cmd: AddPlaygroundCommand,
): AddPlaygroundCommand {
  checkRealmAdministrator(ctx.realm.user(cmd.acting_user_id));
  if (ctx.store.playgrounds.exists(ctx.realm.id, cmd.pygments_language, cmd.name)) {
    throw new JsonableError(
      'Realm playground with this Realm, Pygments language and Name already exists.',
    );
  }
  return cmd;
}

export function doAddPlayground(ctx: MutationContext, cmd: AddPlaygroundCommand): { id: number } {
  const id = ctx.store.playgrounds.insert(ctx.realm.id, {
    name: cmd.name,
    pygments_language: cmd.pygments_language,
    url_template: cmd.url_template,
  });
  emitPlaygrounds(ctx);
  return { id };
}

type RemovePlaygroundCommand = { acting_user_id: number; playground_id: number };

export function checkRemovePlayground(
  ctx: MutationContext,
  cmd: RemovePlaygroundCommand,
): RemovePlaygroundCommand {
  checkRealmAdministrator(ctx.realm.user(cmd.acting_user_id));
  if (!ctx.store.playgrounds.byRealm(ctx.realm.id).some((p) => p.id === cmd.playground_id))
    throw new JsonableError('Invalid playground');
  return cmd;
}

export function doRemovePlayground(
  ctx: MutationContext,
  cmd: RemovePlaygroundCommand,
): Record<string, never> {
  ctx.store.playgrounds.remove(ctx.realm.id, cmd.playground_id);
  emitPlaygrounds(ctx);
  return {};
}
