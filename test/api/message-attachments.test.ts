/**
 * Sending and deleting messages through the API claims and releases the uploads they link (the
 * reference's do_claim_attachments in do_send_messages; found by the crash-safety test's
 * consistency check): the attachment lists the message, `has_attachment` is set only for uploads
 * the sender may share, the owner gets `attachment` `update` events.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';

t.test('a sent message claims the uploads it links; deleting it releases them', async (t) => {
  const { api, events, fx } = await startServer(t);
  await api.post('desdemona', 'users/me/subscriptions', {
    subscriptions: [{ name: 'files' }],
    principals: [fx.users.hamlet!.id, fx.users.othello!.id],
  });
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'a.txt', data: 'a', contentType: 'text/plain' }]),
  );
  const url = String(up.url);
  const before = events.length;
  const id = await sendChannelMessage(api, 'hamlet', 'files', 'up', `see [a](${url})`);
  const list = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
    messages: { id: number }[];
  }[];
  t.same(
    list[0]!.messages.map((m) => m.id),
    [id],
    'the attachment lists the message',
  );
  const update = events
    .slice(before)
    .find((e) => e.event.type === 'attachment' && e.event.op === 'update');
  t.ok(update, 'an attachment update event');
  t.same(update?.users, [fx.users.hamlet!.id], 'to the owner only');
  const fetched = assertSuccess(
    t,
    await api.get('hamlet', 'messages', { message_ids: [id], apply_markdown: false }),
  ).messages as { id: number }[];
  t.equal(fetched.length, 1);

  // Another user linking hamlet's upload without access to it claims nothing.
  const other = await sendChannelMessage(api, 'othello', 'files', 'up', `again [a](${url})`);
  const after = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
    messages: { id: number }[];
  }[];
  t.same(
    after[0]!.messages.map((m) => m.id).sort((a, b) => a - b),
    [id, other],
    'a user who can see the file through a message shares it again',
  );

  assertSuccess(t, await api.delete('desdemona', `messages/${id}`));
  assertSuccess(t, await api.delete('desdemona', `messages/${other}`));
  const released = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
    messages: unknown[];
  }[];
  t.same(released[0]!.messages, [], 'deleting the messages released the upload');
});

t.test('linking an upload one may not see claims nothing', async (t) => {
  const { api, fx } = await startServer(t);
  await api.post('desdemona', 'users/me/subscriptions', {
    subscriptions: [{ name: 'elsewhere' }],
    principals: [fx.users.othello!.id],
  });
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'b.txt', data: 'b', contentType: 'text/plain' }]),
  );
  const id = await sendChannelMessage(api, 'othello', 'elsewhere', 'x', `[b](${String(up.url)})`);
  t.ok(id > 0, 'sent');
  const list = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
    messages: unknown[];
  }[];
  t.same(list[0]!.messages, [], 'not claimed by a message of another user');
});
