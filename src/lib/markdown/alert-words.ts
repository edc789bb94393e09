/**
 * Finding the users whose alert words occur in a message, as the reference does (its
 * AlertWordNotificationProcessor over an Aho–Corasick automaton of the realm's words): every
 * occurrence of every word in the lower-cased content counts when the character before it is
 * absent, the first one, or one of ALERT_BEFORE, and the character after it is absent or one of
 * ALERT_AFTER.
 *
 * The automaton is built once per render context (a realm may have thousands of words), so a
 * message costs one pass over its characters whatever the number of words.
 */

import type { RenderAlertWord } from './context.js';

/** Characters around an alert word that still make it a word (the reference's lists). */
const ALERT_BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const ALERT_AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

export type AlertWordMatcher = {
  /** Node → word index ending there (-1: none). */
  readonly wordAt: Int32Array;
  /** Node → the nearest node on its failure chain where a word ends (0: none). */
  readonly outLink: Int32Array;
  readonly fail: Int32Array;
  /** (node × 65536 + UTF-16 code unit) → next node. */
  readonly next: ReadonlyMap<number, number>;
  /** Word index → its length and the users who have it. */
  readonly lengths: readonly number[];
  readonly users: readonly (readonly number[])[];
};

/** Builds the automaton for `words` (lower-cased word → users); null when there are none. */
export function buildAlertWordMatcher(
  words: ReadonlyMap<string, readonly number[]>,
): AlertWordMatcher | null {
  if (words.size === 0) return null;
  const next = new Map<number, number>();
  const wordAtList: number[] = [-1];
  const lengths: number[] = [];
  const users: (readonly number[])[] = [];
  let nodes = 1;
  for (const [word, ids] of words) {
    let node = 0;
    for (let i = 0; i < word.length; i++) {
      const key = node * 65536 + word.charCodeAt(i);
      let to = next.get(key);
      if (to === undefined) {
        to = nodes++;
        next.set(key, to);
        wordAtList.push(-1);
      }
      node = to;
    }
    wordAtList[node] = lengths.length;
    lengths.push(word.length);
    users.push(ids);
  }
  // Children of each node, to walk the trie breadth-first.
  const children: [number, number][][] = Array.from({ length: nodes }, () => []);
  for (const [key, to] of next) children[Math.floor(key / 65536)]!.push([key % 65536, to]);
  const fail = new Int32Array(nodes);
  const outLink = new Int32Array(nodes);
  const wordAt = Int32Array.from(wordAtList);
  const queue: number[] = [];
  for (const [, child] of children[0]!) queue.push(child);
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q]!;
    for (const [c, child] of children[node]!) {
      let f = fail[node]!;
      while (f !== 0 && !next.has(f * 65536 + c)) f = fail[f]!;
      const target = next.get(f * 65536 + c);
      fail[child] = target !== undefined && target !== child ? target : 0;
      const fc = fail[child];
      outLink[child] = wordAt[fc]! >= 0 ? fc : outLink[fc]!;
      queue.push(child);
    }
  }
  return { wordAt, outLink, fail, next, lengths, users };
}

const matchers = new WeakMap<readonly RenderAlertWord[], AlertWordMatcher | null>();

/**
 * The matcher for a context's `alert_words`, built once per list object: contexts rebuilt for
 * other reasons (a user renamed, a channel created) keep the same list, and so the same matcher
 * (src/queries/alert-words.ts hands out the same array while the words are the same).
 */
export function alertWordMatcherFor(list: readonly RenderAlertWord[]): AlertWordMatcher | null {
  let m = matchers.get(list);
  if (m === undefined) {
    const words = new Map<string, number[]>();
    for (const a of list) {
      const w = a.word.toLowerCase();
      if (!w) continue;
      const ids = words.get(w);
      if (ids) ids.push(a.user_id);
      else words.set(w, [a.user_id]);
    }
    m = buildAlertWordMatcher(words);
    matchers.set(list, m);
  }
  return m;
}

/** The users (ascending) with an alert word in `content`. */
export function alertWordUsers(content: string, m: AlertWordMatcher | null): number[] {
  if (m === null) return [];
  const text = content.toLowerCase();
  const found = new Set<number>();
  const done = new Uint8Array(m.lengths.length);
  let node = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let to = m.next.get(node * 65536 + c);
    while (to === undefined && node !== 0) {
      node = m.fail[node]!;
      to = m.next.get(node * 65536 + c);
    }
    node = to ?? 0;
    for (let o = m.wordAt[node]! >= 0 ? node : m.outLink[node]!; o !== 0; o = m.outLink[o]!) {
      const w = m.wordAt[o]!;
      if (done[w]) continue;
      const before = i - m.lengths[w]!; // the character just before the occurrence
      const after = i + 1;
      if (
        (before <= 0 || ALERT_BEFORE.has(text[before]!)) &&
        (after >= text.length || ALERT_AFTER.has(text[after]!))
      ) {
        done[w] = 1;
        for (const id of m.users[w]!) found.add(id);
      }
    }
  }
  return [...found].sort((a, b) => a - b);
}
