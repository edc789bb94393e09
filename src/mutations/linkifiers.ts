/**
 * Adding, changing, removing and reordering linkifiers. Reference: actions/realm_linkifiers.py.
 * The pattern and template were validated (pure checks) by the endpoint; here: uniqueness,
 * existence, and the `realm_linkifiers` event to everyone in the realm.
 */
import { JsonableError } from '../lib/errors.js';
import { checkRealmAdministrator } from '../lib/user-rules.js';
import { noteLinkifiersChanged } from '../queries/linkifiers.js';
import type { MutationContext } from './context.js';

export class LinkifierNotFoundError extends JsonableError {
  constructor() {
    super('Linkifier not found.');
  }
}

function duplicatePattern(): JsonableError {
  const msg = 'Realm filter with this Realm and Pattern already exists.';
  return new JsonableError(msg, { extra: { errors: { __all__: [msg] } } });
}

function emitLinkifiers(ctx: MutationContext): void {
  const { store, realm } = ctx;
  const list = store.linkifiers
    .byRealm(realm.id)
    .map((r) => ({ pattern: r.pattern, url_template: r.url_template, id: r.id }));
  ctx.emit(
    { type: 'realm_linkifiers', realm_linkifiers: list },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => noteLinkifiersChanged(realm));
}

export type AddLinkifierCommand = { acting_user_id: number; pattern: string; url_template: string };

export function checkAddLinkifier(
  ctx: MutationContext,
  cmd: AddLinkifierCommand,
): AddLinkifierCommand {
  const { store, realm } = ctx;
  checkRealmAdministrator(realm.user(cmd.acting_user_id));
  if (store.linkifiers.byPattern(realm.id, cmd.pattern)) throw duplicatePattern();
  return cmd;
}

export function doAddLinkifier(ctx: MutationContext, cmd: AddLinkifierCommand): { id: number } {
  const { store, realm } = ctx;
  const id = store.linkifiers.insert(
    realm.id,
    cmd.pattern,
    cmd.url_template,
    store.linkifiers.nextOrder(realm.id),
  );
  emitLinkifiers(ctx);
  return { id };
}

export type UpdateLinkifierCommand = {
  acting_user_id: number;
  id: number;
  pattern: string;
  url_template: string;
};

export function checkUpdateLinkifier(
  ctx: MutationContext,
  cmd: UpdateLinkifierCommand,
): UpdateLinkifierCommand {
  const { store, realm } = ctx;
  checkRealmAdministrator(realm.user(cmd.acting_user_id));
  if (!store.linkifiers.byId(realm.id, cmd.id)) throw new LinkifierNotFoundError();
  const same = store.linkifiers.byPattern(realm.id, cmd.pattern);
  if (same && same.id !== cmd.id) throw duplicatePattern();
  return cmd;
}

export function doUpdateLinkifier(
  ctx: MutationContext,
  cmd: UpdateLinkifierCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  store.linkifiers.update(realm.id, cmd.id, cmd.pattern, cmd.url_template);
  emitLinkifiers(ctx);
  return {};
}

type RemoveLinkifierCommand = { acting_user_id: number; id: number };

export function checkRemoveLinkifier(
  ctx: MutationContext,
  cmd: RemoveLinkifierCommand,
): RemoveLinkifierCommand {
  const { store, realm } = ctx;
  checkRealmAdministrator(realm.user(cmd.acting_user_id));
  if (!store.linkifiers.byId(realm.id, cmd.id)) throw new LinkifierNotFoundError();
  return cmd;
}

export function doRemoveLinkifier(
  ctx: MutationContext,
  cmd: RemoveLinkifierCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  store.linkifiers.remove(realm.id, cmd.id);
  emitLinkifiers(ctx);
  return {};
}

type ReorderLinkifiersCommand = {
  acting_user_id: number;
  ordered_linkifier_ids: readonly number[];
};

/** The new order: a permutation of every linkifier of the realm. */
export function checkReorderLinkifiers(
  ctx: MutationContext,
  cmd: ReorderLinkifiersCommand,
): readonly number[] {
  const { store, realm } = ctx;
  checkRealmAdministrator(realm.user(cmd.acting_user_id));
  const ids = cmd.ordered_linkifier_ids;
  const existing = new Set(store.linkifiers.byRealm(realm.id).map((r) => r.id));
  if (
    new Set(ids).size !== ids.length ||
    ids.length !== existing.size ||
    ids.some((id) => !existing.has(id))
  )
    throw new JsonableError('Invalid order mapping.');
  return ids;
}

export function doReorderLinkifiers(
  ctx: MutationContext,
  ids: readonly number[],
): Record<string, never> {
  const { store, realm } = ctx;
  if (ids.length === 0) return {};
  ids.forEach((id, order) => store.linkifiers.setOrder(realm.id, id, order));
  emitLinkifiers(ctx);
  return {};
}
