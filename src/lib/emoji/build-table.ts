/**
 * Builds the emoji table (./data.ts) from the emoji dataset (iamcal's emoji-datasource, the
 * dataset the reference builds from) and the reference's name choices (./reference-names.ts):
 * every emoji the dataset has a Google image for, named as the reference names it; an emoji
 * the reference list does not know yet (a newer Unicode release) takes the dataset's short name.
 * Skin-tone modifiers and the clock faces the reference leaves out stay out. Pure: the CLI
 * (src/emoji-table.ts) writes the result, a unit test checks the committed table matches it.
 */

/** The fields of a dataset entry this uses. */
export type DatasetEmoji = {
  unified: string;
  short_name: string;
  has_img_google: boolean;
  sort_order?: number;
};

/** Codes the reference deliberately has no names for. */
const LEFT_OUT = new Set([
  '1f3fb',
  '1f3fc',
  '1f3fd',
  '1f3fe',
  '1f3ff',
  ...'1f550 1f551 1f552 1f553 1f554 1f555 1f556 1f558 1f559 1f55a 1f55b 1f55c 1f55d 1f55e 1f55f 1f560 1f561 1f562 1f563 1f564 1f565 1f566 1f567'.split(
    ' ',
  ),
]);

/** The reference's emoji code of a dataset entry: lower-case, variation selectors removed. */
export function datasetCode(e: DatasetEmoji): string {
  return e.unified
    .toLowerCase()
    .split('-')
    .filter((c) => c !== 'fe0f')
    .join('-');
}

function cleanName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[\s\-–]/g, '_')
    .replace(/[“”:.,()‘’']/g, '')
    .replace(/&/g, 'and')
    .replace(/_{2,}/g, '_');
}

export function buildEmojiTable(dataset: readonly DatasetEmoji[], referenceNames: string): string {
  const names = new Map<string, string[]>();
  for (const line of referenceNames.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length >= 2) names.set(parts[0]!, parts.slice(1));
  }
  const taken = new Set<string>();
  for (const list of names.values()) for (const n of list) taken.add(n);
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const e of dataset) {
    if (!e.has_img_google) continue;
    const code = datasetCode(e);
    if (LEFT_OUT.has(code) || seen.has(code)) continue;
    seen.add(code);
    let list = names.get(code);
    if (!list) {
      const name = cleanName(e.short_name);
      if (taken.has(name)) continue; // a name already in use: leave it out rather than clash
      taken.add(name);
      list = [name];
    }
    lines.push(`${code} ${list.join(' ')}`);
  }
  return lines.join('\n');
}
