/**
 * web/state/roving.ts: a toolbar's arrow keys (a message's actions): → ← wrap around, Home and
 * End to the ends, other keys and empty toolbars left alone.
 */
import t from 'tap';
import { roveTo } from '../../web/state/roving.js';

t.test('→ and ← move one, wrapping around; Home and End', (t) => {
  t.equal(roveTo('ArrowRight', 0, 4), 1);
  t.equal(roveTo('ArrowRight', 3, 4), 0, 'past the last: the first');
  t.equal(roveTo('ArrowLeft', 2, 4), 1);
  t.equal(roveTo('ArrowLeft', 0, 4), 3, 'before the first: the last');
  t.equal(roveTo('Home', 2, 4), 0);
  t.equal(roveTo('End', 1, 4), 3);
  t.equal(roveTo('ArrowRight', 0, 1), 0, 'one control: it stays');
  t.end();
});

t.test('other keys, and nothing to move from or between', (t) => {
  for (const key of ['ArrowUp', 'ArrowDown', 'Tab', 'Enter', 'a'])
    t.equal(roveTo(key, 1, 4), undefined, key);
  t.equal(roveTo('ArrowRight', 0, 0), undefined, 'no controls');
  t.equal(roveTo('ArrowRight', -1, 3), undefined, 'the focus not on one of them');
  t.equal(roveTo('ArrowLeft', 3, 3), undefined, 'out of range');
  t.end();
});
