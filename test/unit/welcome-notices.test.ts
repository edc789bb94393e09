/**
 * The signup notices (src/lib/welcome.ts joinedNotice, invitationAcceptedNotice) are built inside
 * the transaction that makes the account, not rendered: for any name checkFullName accepts, the
 * markup built must be what the renderer makes of the notice's own markdown once the account is
 * known (a silent mention: no mention flags), and the search text that markup's text.
 */
import fc from 'fast-check';
import t from 'tap';
import { JsonableError } from '../../src/lib/errors.js';
import { EMPTY_CONTEXT, renderMarkdown } from '../../src/lib/markdown/index.js';
import { htmlToText } from '../../src/lib/search.js';
import { checkFullName } from '../../src/lib/user-rules.js';
import { invitationAcceptedNotice, joinedNotice } from '../../src/lib/welcome.js';
import { fuzzScale, fuzzSeed } from '../helpers/fuzz.js';

const seed = fuzzSeed();

function acceptedName(raw: string): string | null {
  try {
    return checkFullName(raw);
  } catch (err) {
    if (err instanceof JsonableError) return null;
    throw err;
  }
}

/** Names with the characters markup and markdown care about, and any others. */
const names = fc
  .oneof(
    fc.string({ unit: fc.constantFrom(...'ab &<>\'"_~#|[]()!:;=-+.é😀\u00a0'.split('')) }),
    fc.string({ unit: 'grapheme' }),
    fc.constantFrom('King Hamlet', 'A &amp; B', 'x|12', 'Ünïcode "q"', "O'Brien & <Co>"),
  )
  .map(acceptedName)
  .filter((n): n is string => n !== null);

t.test('the built notice is what the renderer makes of its markdown', (t) => {
  let n = 0;
  fc.assert(
    fc.property(names, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (fullName, id) => {
      const user = { id, full_name: fullName, is_active: true };
      const context = { ...EMPTY_CONTEXT, version: `notice-${n++}`, users: [user] };
      for (const notice of [joinedNotice(user), invitationAcceptedNotice(user)]) {
        const r = renderMarkdown(notice.content, context);
        if (r.rendered_content !== notice.rendered.rendered_content) {
          throw new Error(`${r.rendered_content} ≠ ${notice.rendered.rendered_content}`);
        }
        if (r.mentions_user_ids.length > 0) throw new Error('a silent mention mentions nobody');
        if (notice.search_text !== htmlToText(r.rendered_content)) throw new Error('search text');
      }
    }),
    { seed, numRuns: 400 * fuzzScale() },
  );
  t.pass(`400 × ${fuzzScale()} names, seed ${seed}`);
  t.end();
});
