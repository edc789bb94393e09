/**
 * `content_html_diff` of an edit (GET /messages/{id}/history): the new rendered HTML with the
 * text the edit added wrapped in `<span class="highlight_text_inserted">` and the text it removed
 * put back in `<span class="highlight_text_deleted">`, as the reference's
 * lib/html_diff.py highlight_html_differences marks them. Tags are kept from the new HTML (a
 * removed tag is dropped, never half-emitted), so the result is well-formed whenever the input is.
 *
 * Both sides are split into tokens (a tag, a run of word characters, a run of spaces, one other
 * character) and compared with a longest-common-subsequence table after trimming the common
 * prefix and suffix. The table is bounded (MAX_CELLS): beyond it the changed middle is shown as
 * deleted then inserted whole. Pure: runs in the render worker (workers/render.worker.ts).
 */

const TOKEN_RE = /<[^>]*>|[\p{L}\p{N}_]+|\s+|[^<]/gu;
const MAX_CELLS = 4_000_000;

const INSERTED = '<span class="highlight_text_inserted">';
const DELETED = '<span class="highlight_text_deleted">';

function tokenize(html: string): string[] {
  return html.match(TOKEN_RE) ?? [];
}

const isTag = (t: string) => t.startsWith('<');

type Op = { kind: 'same' | 'ins' | 'del'; token: string };

function diffTokens(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: 'same', token: a[i]! });
  const n = endA - start;
  const m = endB - start;
  if (n * m > MAX_CELLS) {
    for (let i = start; i < endA; i++) ops.push({ kind: 'del', token: a[i]! });
    for (let j = start; j < endB; j++) ops.push({ kind: 'ins', token: b[j]! });
  } else {
    // lcs[i][j]: LCS length of a[start+i..endA) and b[start+j..endB).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          a[start + i] === b[start + j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[start + i] === b[start + j]) {
        ops.push({ kind: 'same', token: a[start + i]! });
        i++;
        j++;
      } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
        ops.push({ kind: 'del', token: a[start + i]! });
        i++;
      } else {
        ops.push({ kind: 'ins', token: b[start + j]! });
        j++;
      }
    }
    for (; i < n; i++) ops.push({ kind: 'del', token: a[start + i]! });
    for (; j < m; j++) ops.push({ kind: 'ins', token: b[start + j]! });
  }
  for (let i = endA; i < a.length; i++) ops.push({ kind: 'same', token: a[i]! });
  return ops;
}

/** The new HTML with insertions and deletions of text highlighted. */
export function highlightHtmlDifferences(before: string, after: string): string {
  const ops = diffTokens(tokenize(before), tokenize(after));
  let out = '';
  let open: 'ins' | 'del' | null = null;
  const close = () => {
    if (open) out += '</span>';
    open = null;
  };
  for (const op of ops) {
    if (isTag(op.token)) {
      close();
      if (op.kind !== 'del') out += op.token;
      continue;
    }
    if (op.kind === 'same') {
      close();
      out += op.token;
      continue;
    }
    if (open !== op.kind) {
      close();
      out += op.kind === 'ins' ? INSERTED : DELETED;
      open = op.kind;
    }
    out += op.token;
  }
  close();
  return out;
}
