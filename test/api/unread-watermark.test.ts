/**
 * The unread index's watermark (src/storage/unread.ts) changes no answer: the register's
 * unread_msgs, is:unread narrows both ways, first_unread anchors and marking read by scope answer
 * the same whether a user's unread messages are above the watermark (read from user_messages),
 * below it (from unread_messages) or on both sides.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { fetchNarrow, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { startServer, CLUSTER_MODE } from '../helpers/server.js';

t.test(
  'answers about unread messages do not depend on the watermark',
  { skip: CLUSTER_MODE },
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    const store = ts.server.store;
    store.stopSettlingUnread(); // this test places the watermark itself
    const [hamlet, othello, iago] = [fx.users.hamlet!.id, fx.users.othello!.id, fx.users.iago!.id];
    const ch = await createChannel(api, 'othello', 'watermarked', {
      principals: [hamlet, othello, iago],
    });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(await sendChannelMessage(api, 'othello', ch, i % 3 === 0 ? 'a' : 'b', `m${i}`));
    ids.push(await sendDirectMessage(api, 'othello', [hamlet], 'a direct message'));
    ids.push(await sendDirectMessage(api, 'iago', [hamlet, othello], 'a group message'));
    for (let i = 0; i < 4; i++)
      ids.push(await sendChannelMessage(api, 'iago', ch, 'c', `late ${i}`));
    assertSuccess(
      t,
      await api.post('hamlet', 'messages/flags', {
        messages: JSON.stringify([ids[1], ids[4], ids[13]]),
        op: 'add',
        flag: 'read',
      }),
    );

    const answers = async () => {
      const reg = await register(t, api, 'hamlet', { fetch_event_types: ['message'] });
      const unreadNarrow = [{ operator: 'is', operand: 'unread' }];
      const inChannel = [...unreadNarrow, { operator: 'channel', operand: ch }];
      return {
        unread_msgs: reg.body.unread_msgs,
        newest: (await fetchNarrow(api, 'hamlet', unreadNarrow)).ids,
        oldest: (
          await fetchNarrow(api, 'hamlet', unreadNarrow, {
            anchor: 'oldest',
            num_before: 0,
            num_after: 5,
          })
        ).ids,
        channel: (await fetchNarrow(api, 'hamlet', inChannel, { num_before: 3 })).ids,
        firstUnread: (
          await fetchNarrow(api, 'hamlet', [], {
            anchor: 'first_unread',
            num_before: 0,
            num_after: 2,
          })
        ).body.anchor,
      };
    };
    const moveTo = (id: number) =>
      store.transaction(() => {
        while (store.unread.watermark() < id && store.unread.moveWatermark(1));
      });

    const before = await answers();
    t.ok(store.unread.watermark() < ids[0]!, 'all above the watermark at first');
    t.equal(before.newest.length, ids.length - 3, 'the unread messages');

    moveTo(ids[7]!); // some below, some above
    t.ok(store.unread.watermark() >= ids[7]! && store.unread.watermark() < ids.at(-1)!);
    t.same(await answers(), before, 'the same with the watermark in the middle');
    moveTo(ids.at(-1)!); // all below
    t.same(await answers(), before, 'the same with every message below it');

    // Changes below the watermark reach the index: marked unread again, then read by topic.
    assertSuccess(
      t,
      await api.post('hamlet', 'messages/flags', {
        messages: JSON.stringify([ids[1]]),
        op: 'remove',
        flag: 'read',
      }),
    );
    t.same(
      (await fetchNarrow(api, 'hamlet', [{ operator: 'is', operand: 'unread' }])).ids,
      ids.filter((id) => id !== ids[4] && id !== ids[13]),
      'a message marked unread again is unread',
    );
    assertSuccess(
      t,
      await api.post('hamlet', 'mark_topic_as_read', { stream_id: ch, topic_name: 'b' }),
    );
    const after = await answers();
    t.same(
      after.newest,
      ids.filter((id, i) => i !== 4 && i !== 13 && !(i < 12 && i % 3 !== 0)),
      'the topic read, the rest still unread',
    );
    // And the same again with the watermark back at the start (a fresh copy's view).
    store.transaction(() => {
      store.db.exec('DELETE FROM unread_messages');
      store.db.prepare('UPDATE unread_watermark SET message_id = 0').run();
    });
    t.same(await answers(), after, 'the same read from user_messages alone');
  },
);
