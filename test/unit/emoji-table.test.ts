/**
 * The committed emoji table is exactly what `npm run emoji` makes from the pinned dataset and the
 * reference's name choices, and it has what the reference has.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { buildEmojiTable, type DatasetEmoji } from '../../src/lib/emoji/build-table.js';
import { EMOJI_DATASET_VERSION, EMOJI_TABLE } from '../../src/lib/emoji/data.js';
import { emojiCodeForName, emojiNameForCode } from '../../src/lib/emoji/index.js';
import { REFERENCE_EMOJI_NAMES } from '../../src/lib/emoji/reference-names.js';

const require = createRequire(import.meta.url);

t.test('the committed table is the generated one', (t) => {
  const pkg = require('emoji-datasource/package.json') as { version: string };
  t.equal(EMOJI_DATASET_VERSION, pkg.version, 'generated from the installed dataset version');
  const dataset = require('emoji-datasource/emoji.json') as DatasetEmoji[];
  t.equal(EMOJI_TABLE.trim(), buildEmojiTable(dataset, REFERENCE_EMOJI_NAMES), 'run npm run emoji');
  t.end();
});

t.test("the reference's names", (t) => {
  t.equal(emojiCodeForName('smile'), '1f642');
  t.equal(emojiCodeForName('relaxed'), '263a', 'an alias');
  t.equal(emojiNameForCode('263a'), 'smiling_face');
  t.equal(emojiNameForCode('1f426-200d-1f525'), 'phoenix', 'Emoji 15.1');
  t.equal(emojiNameForCode('1f34b-200d-1f7e9'), 'lime');
  t.equal(emojiCodeForName('skin-tone-2'), undefined, 'skin tones are left out');
  t.equal(emojiCodeForName('clock1'), undefined, 'as are the clock faces the reference leaves out');
  t.ok(EMOJI_TABLE.trim().split('\n').length >= 1800, 'about as many as the reference knows');
  t.end();
});

t.test('an emoji the reference list does not know takes the dataset name', (t) => {
  const table = buildEmojiTable(
    [
      { unified: '1F642', short_name: 'slightly_smiling_face', has_img_google: true },
      { unified: '1FAE9', short_name: 'face-with-bags', has_img_google: true },
      { unified: '1FAEA', short_name: 'smile', has_img_google: true },
      { unified: '1FAEB', short_name: 'no_image', has_img_google: false },
    ],
    '1f642 smile',
  );
  t.equal(table, '1f642 smile\n1fae9 face_with_bags', 'a clashing name is left out');
  t.end();
});
