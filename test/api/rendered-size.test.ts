/**
 * Rendered size: content whose HTML passes the reference's limit (MAX_MESSAGE_LENGTH × 100 =
 * 1,000,000 characters) is refused with the reference's error ("Unable to render message", 400
 * BAD_REQUEST) when sent, edited, scheduled or previewed, and nothing is stored. A 9,805-character
 * TeX formula renders to about 1.4 million characters (the case); one of 6,004 to about
 * 860,000, which is accepted.
 */
import t from 'tap';
import { checkRenderedLength } from '../../src/lib/message-content.js';
import { MAX_RENDERED_LENGTH } from '../../src/lib/limits.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

/** `$$x^2x^2…$$`: `units` superscripts in one display formula. */
const tex = (units: number) => '$$' + 'x^2'.repeat(units) + '$$';
const TOO_LARGE = tex(3267);
const LARGE = tex(2000);

t.test('the limit counts code points', (t) => {
  t.equal(MAX_RENDERED_LENGTH, 1_000_000);
  t.doesNotThrow(() => checkRenderedLength('a'.repeat(1_000_000)), 'at the limit: accepted');
  t.throws(() => checkRenderedLength('a'.repeat(1_000_001)), /Unable to render message/);
  // 600,000 astral characters are 1,200,000 UTF-16 units but 600,000 characters.
  t.doesNotThrow(() => checkRenderedLength('😀'.repeat(600_000)), 'astral characters count once');
  t.throws(() => checkRenderedLength('😀'.repeat(1_000_001)), /Unable to render message/);
  t.end();
});

t.test('sends, edits, schedules and previews past the limit are refused', async (t) => {
  t.equal(TOO_LARGE.length, 9805, "the issue's 9,805 characters");
  const { api, server } = await startServer(t);
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const count = () => server.store.db.prepare('SELECT count(*) FROM messages').pluck().get();
  const before = count();

  const sent = await api.post('hamlet', 'messages', {
    type: 'channel',
    to: String(verona),
    topic: 'math',
    content: TOO_LARGE,
  });
  assertError(t, sent, 'Unable to render message');
  t.equal(count(), before, 'nothing stored');

  assertError(
    t,
    await api.post('hamlet', 'messages/render', { content: TOO_LARGE }),
    'Unable to render message',
  );
  assertError(
    t,
    await api.post('hamlet', 'scheduled_messages', {
      type: 'channel',
      to: verona,
      topic: 'math',
      content: TOO_LARGE,
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
    }),
    'Unable to render message',
  );

  // Under the limit: accepted, and the rendering is what was stored.
  const preview = assertSuccess(t, await api.post('hamlet', 'messages/render', { content: LARGE }));
  const rendered = preview.rendered as string;
  t.ok(rendered.length > 800_000 && rendered.length <= MAX_RENDERED_LENGTH, `${rendered.length}`);
  const id = await sendChannelMessage(api, 'hamlet', verona, 'math', LARGE);
  const edited = await api.patch('hamlet', `messages/${id}`, { content: TOO_LARGE });
  assertError(t, edited, 'Unable to render message');
  const stored = assertSuccess(t, await api.get('hamlet', `messages/${id}`)).message as {
    content: string;
  };
  t.equal(stored.content, rendered, 'the edit changed nothing');
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server still serves');
});
