/**
 * The sequence comparison under the HTML diff: Python's difflib.SequenceMatcher (longest matching
 * blocks, recursively, with its "popular tokens are no anchors" rule) as lxml's
 * InsensitiveSequenceMatcher uses it (tiny matches amid changes dropped), down to its opcodes.
 *
 * Hand-written on purpose: a minimal diff (the `diff` package's Myers algorithm) aligns repeated
 * tokens differently from SequenceMatcher's longest-block-first search (about 6% of random word
 * edits gave other opcodes), and the output must be the reference's.
 */

type Block = [number, number, number];

function matchingBlocks(a: readonly string[], b: readonly string[]): Block[] {
  // b2j: where each token occurs in b; tokens frequent in long sequences are not anchors.
  const b2j = new Map<string, number[]>();
  b.forEach((t, j) => {
    const list = b2j.get(t);
    if (list) list.push(j);
    else b2j.set(t, [j]);
  });
  if (b.length >= 200) {
    const limit = Math.floor(b.length / 100) + 1;
    for (const [t, list] of b2j) if (list.length > limit) b2j.delete(t);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): Block => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i]!) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (
      besti + bestsize < ahi &&
      bestj + bestsize < bhi &&
      a[besti + bestsize] === b[bestj + bestsize]
    ) {
      bestsize++;
    }
    return [besti, bestj, bestsize];
  };
  const found: Block[] = [];
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const m = longest(alo, ahi, blo, bhi);
    const [i, j, k] = m;
    if (k > 0) {
      found.push(m);
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const merged: Block[] = [];
  let [i1, j1, k1] = [0, 0, 0];
  for (const [i2, j2, k2] of found) {
    if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
    else {
      if (k1) merged.push([i1, j1, k1]);
      [i1, j1, k1] = [i2, j2, k2];
    }
  }
  if (k1) merged.push([i1, j1, k1]);
  merged.push([a.length, b.length, 0]);
  // Insensitive: no tiny matches amid changes.
  const threshold = Math.min(2, b.length / 4);
  return merged.filter(([, , size]) => size > threshold || size === 0);
}

type Opcode = ['equal' | 'replace' | 'delete' | 'insert', number, number, number, number];

export function opcodes(a: readonly string[], b: readonly string[]): Opcode[] {
  const out: Opcode[] = [];
  let i = 0;
  let j = 0;
  for (const [ai, bj, size] of matchingBlocks(a, b)) {
    if (i < ai && j < bj) out.push(['replace', i, ai, j, bj]);
    else if (i < ai) out.push(['delete', i, ai, j, bj]);
    else if (j < bj) out.push(['insert', i, ai, j, bj]);
    i = ai + size;
    j = bj + size;
    if (size) out.push(['equal', ai, i, bj, j]);
  }
  return out;
}
