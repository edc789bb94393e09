/**
 * Personal channel colors: a new subscription gets the first palette color the user does not use
 * yet (cycling through the palette when all are taken), as the reference's stream_color.py does.
 */
export const STREAM_ASSIGNMENT_COLORS: readonly string[] = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
];

export function pickColor(used: Iterable<string>): string {
  const taken = new Map<string, number>();
  for (const c of used) taken.set(c.toLowerCase(), (taken.get(c.toLowerCase()) ?? 0) + 1);
  let best = STREAM_ASSIGNMENT_COLORS[0]!;
  let bestCount = Infinity;
  for (const c of STREAM_ASSIGNMENT_COLORS) {
    const n = taken.get(c) ?? 0;
    if (n < bestCount) {
      best = c;
      bestCount = n;
      if (n === 0) break;
    }
  }
  return best;
}

const HEX_COLOR_RE = /^#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$/;

export function isHexColor(s: string): boolean {
  return HEX_COLOR_RE.test(s);
}
