/**
 * Caches derived from a realm (linkifiers, alert words, the render context) belong to that realm's
 * read model: two servers in one process, each with a realm of the same id, never see each
 * other's entries, and one server's change does not touch the other's caches.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { linkifierStamp } from '../../src/queries/linkifiers.js';
import { alertWordStamp } from '../../src/queries/alert-words.js';
import { renderContextFor } from '../../src/queries/render-context.js';

function viewOf(s: TestServer) {
  return s.server.context.realms.get(s.fx.realmId)!.view;
}

/** Points the realm's first linkifier at `base`. */
async function retarget(s: TestServer, pattern: string, base: string): Promise<void> {
  const list = assertSuccess(t, await s.api.get('iago', 'realm/linkifiers')).linkifiers as {
    id: number;
  }[];
  const url_template = `${base}/{id}`;
  assertSuccess(
    t,
    await s.api.patch('iago', `realm/filters/${list[0]!.id}`, { pattern, url_template }),
  );
}

async function render(s: TestServer, content: string): Promise<string> {
  const res = await s.api.post('hamlet', 'messages/render', { content });
  return assertSuccess(t, res).rendered as string;
}

t.test('two servers in one process keep their own linkifier and alert-word caches', async (t) => {
  const a = await startServer(t);
  const b = await startServer(t);
  t.equal(a.fx.realmId, b.fx.realmId, 'the same realm id on both servers');
  const pattern = '#(?P<id>[0-9]+)';
  assertSuccess(
    t,
    await a.api.post('iago', 'realm/filters', { pattern, url_template: 'https://a.example/{id}' }),
  );
  assertSuccess(
    t,
    await b.api.post('iago', 'realm/filters', { pattern, url_template: 'https://b.example/{id}' }),
  );
  // Both render (and so cache) their linkifiers.
  t.match(await render(a, 'see #12'), 'https://a.example/12');
  t.match(await render(b, 'see #12'), 'https://b.example/12');

  const viewB = viewOf(b);
  const stampB = linkifierStamp(viewB);
  const wordsB = alertWordStamp(viewB);
  const contextB = renderContextFor(b.server.context.config, b.server.store, viewB);

  // Server A changes its linkifier and alert words; B's caches are not touched.
  await retarget(a, pattern, 'https://a2.example');
  assertSuccess(
    t,
    await a.api.post('hamlet', 'users/me/alert_words', { alert_words: JSON.stringify(['ghost']) }),
  );
  t.equal(linkifierStamp(viewOf(a)), 2, "A's linkifiers changed twice on A");
  t.equal(alertWordStamp(viewOf(a)), 1);
  t.equal(linkifierStamp(viewB), stampB, "A's change leaves B's linkifier stamp alone");
  t.equal(alertWordStamp(viewB), wordsB, "A's change leaves B's alert-word stamp alone");
  t.equal(
    renderContextFor(b.server.context.config, b.server.store, viewB),
    contextB,
    "B's render context is still the one it built",
  );

  t.match(await render(a, 'see #12'), 'https://a2.example/12');
  const renderedB = await render(b, 'see #12');
  t.match(renderedB, 'https://b.example/12');
  t.notMatch(renderedB, 'a2.example');

  // B's own change reaches only B.
  await retarget(b, pattern, 'https://b2.example');
  t.match(await render(b, 'see #12'), 'https://b2.example/12');
  t.match(await render(a, 'see #12'), 'https://a2.example/12');
});
