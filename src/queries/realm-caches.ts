/**
 * Values derived from one realm's state, kept with its read model (RealmView.caches): they live
 * and die with that view, so two servers in one process, or a store reopened, never share an
 * entry. Each query module names its own typed slot; the change counters say which areas a
 * committed mutation touched (the entries derived from an area compare its counter).
 */

/** A typed slot in RealmCaches (one per kind of derived value; `name` is for debugging). */
export type CacheSlot<T> = { readonly name: string; readonly __type?: T };

export function cacheSlot<T>(name: string): CacheSlot<T> {
  return { name };
}

/** Areas read from the store (not from the view) whose derived values a commit invalidates. */
export type ChangeArea = 'linkifiers' | 'realmEmoji' | 'alertWords';

/**
 * The table each change area's cache is read from: a cluster node applying another node's log
 * entry bumps the areas whose tables it wrote (src/cluster/refresh.ts), as the owner's actor does
 * after its commit.
 */
export const CHANGE_AREA_TABLES: Readonly<Record<ChangeArea, string>> = {
  linkifiers: 'linkifiers',
  realmEmoji: 'realm_emoji',
  alertWords: 'alert_words',
};

export class RealmCaches {
  private readonly slots = new Map<CacheSlot<unknown>, unknown>();
  private readonly counters: Record<ChangeArea, number> = {
    linkifiers: 0,
    realmEmoji: 0,
    alertWords: 0,
  };

  get<T>(slot: CacheSlot<T>): T | undefined {
    return this.slots.get(slot) as T | undefined;
  }

  set<T>(slot: CacheSlot<T>, value: T): void {
    this.slots.set(slot, value);
  }

  /** How many committed changes the area has seen (in this view). */
  stamp(area: ChangeArea): number {
    return this.counters[area];
  }

  /** Call after a change to the area commits (the realm actor's afterCommit). */
  changed(area: ChangeArea): void {
    this.counters[area]++;
  }
}
