/**
 * Sizes in words, as the reference's web app writes them (`B`, `KB`, `MB`, `GB`, `TB`): a whole
 * number from 10 up, one decimal below (`1.5 KB`, `12 MB`). A file's size counts in thousands,
 * as the reference's list of uploaded files does; `binary` counts in 1024s, for what the server
 * sets in MiB (the upload limit, the organization's quota) so that 25 MiB reads "25 MB".
 */
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

export function sizeText(n: number, binary = false): string {
  const base = binary ? 1024 : 1000;
  let u = 0;
  let v = Math.max(0, n);
  while (v >= base && u < UNITS.length - 1) {
    v /= base;
    u++;
  }
  if (u === 0) return `${Math.round(v)} B`;
  let shown = v < 10 ? Math.round(v * 10) / 10 : Math.round(v);
  // 999.6 KB rounds to the next unit's 1, not to "1000 KB".
  if (shown >= base && u < UNITS.length - 1) {
    shown = 1;
    u++;
  }
  return `${shown} ${UNITS[u]}`;
}
