/**
 * A real client of the API family in the test suite: zulip-js (npm `zulip-js`, unchanged) against
 * the real server — register, long-poll, send, edit, react, upload — with the reference's spelling
 * of the wire names checked. zulip-js names no client of its own in its User-Agent; under Node it
 * arrives as its HTTP library (node-fetch), which the server counts as a reference-family client
 * (src/lib/wire-names.ts).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createChannel } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';

type Params = Record<string, unknown>;
type Answer = Record<string, unknown> & { result: string; msg: string };
/** The part of zulip-js this test drives. */
type ZulipJs = {
  queues: { register(p: Params): Promise<Answer> };
  events: { retrieve(p: Params): Promise<Answer> };
  messages: {
    send(p: Params): Promise<Answer>;
    update(p: Params): Promise<Answer>;
    getById(p: Params): Promise<Answer>;
    retrieve(p: Params): Promise<Answer>;
  };
  reactions: { add(p: Params): Promise<Answer> };
  server: { settings(): Promise<Answer> };
  users: { me: { getProfile(): Promise<Answer> } };
  callEndpoint(endpoint: string, method: string, params: Params): Promise<Answer>;
};
const zulipInit = createRequire(import.meta.url)('zulip-js') as (config: {
  username: string;
  apiKey: string;
  realm: string;
}) => Promise<ZulipJs>;

type Ev = { id: number; type: string; [k: string]: unknown };

t.test('zulip-js: register, long-poll, send, edit, react, upload', async (t) => {
  const { url, fx, api } = await startServer(t);
  await createChannel(api, 'hamlet', 'zulip-js');
  const z = await zulipInit({
    username: fx.users.hamlet!.email,
    apiKey: fx.users.hamlet!.api_key,
    realm: url,
  });

  const settings = await z.server.settings();
  t.equal(settings.result, 'success');
  t.type(settings.zulip_version, 'string', 'server settings: zulip_version');
  t.type(settings.zulip_feature_level, 'number', 'server settings: zulip_feature_level');

  // Without parameters its FormData is the close delimiter alone: an empty form.
  t.equal((await z.queues.register({})).result, 'success', 'registered without parameters');
  const reg = await z.queues.register({ event_types: ['message', 'update_message', 'reaction'] });
  t.equal(reg.result, 'success', 'registered');
  t.equal(reg.zulip_feature_level, settings.zulip_feature_level);
  const queueId = reg.queue_id as string;
  let last = reg.last_event_id as number;
  const next = async (): Promise<Ev[]> => {
    // A long-poll (dont_block false), answered when the event arrives.
    const res = await z.events.retrieve({ queue_id: queueId, last_event_id: last });
    t.equal(res.result, 'success', 'polled');
    const evs = (res.events as Ev[]).filter((e) => e.type !== 'heartbeat');
    if (res.events && (res.events as Ev[]).length > 0) last = (res.events as Ev[]).at(-1)!.id;
    return evs;
  };

  const polled = next();
  const sent = await z.messages.send({
    to: 'zulip-js',
    type: 'stream',
    subject: 'greetings',
    content: 'Hello from **zulip-js**',
  });
  t.equal(sent.result, 'success', 'sent');
  const id = sent.id as number;
  // zulip-js registers without apply_markdown: the markdown source, as the reference sends it.
  t.match(await polled, [
    { type: 'message', message: { id, subject: 'greetings', content: 'Hello from **zulip-js**' } },
  ]);

  const edited = next();
  t.equal((await z.messages.update({ message_id: id, content: 'Hello again' })).result, 'success');
  t.match(await edited, [{ type: 'update_message', message_id: id, rendered_content: /again/ }]);

  const reacted = next();
  t.equal((await z.reactions.add({ message_id: id, emoji_name: 'zulip' })).result, 'success');
  t.match(
    await reacted,
    [{ type: 'reaction', op: 'add', emoji_name: 'zulip', reaction_type: 'zulip_extra_emoji' }],
    'the extra emoji in the reference spelling',
  );
  const fetched = await z.messages.getById({ message_id: id });
  t.match((fetched.message as { reactions: unknown[] }).reactions, [
    { emoji_name: 'zulip', reaction_type: 'zulip_extra_emoji' },
  ]);

  // Not under t.testdir(): that is the server's data directory (test/helpers/server.ts).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-zulip-js-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, 'some notes');
  const uploaded = await z.callEndpoint('/user_uploads', 'POST', {
    file: fs.createReadStream(file),
  });
  t.equal(uploaded.result, 'success', 'uploaded');
  t.match(uploaded.url, /^\/user_uploads\/.+\/notes\.txt$/);
  const linked = next();
  const withFile = await z.messages.send({
    to: 'zulip-js',
    type: 'stream',
    subject: 'greetings',
    content: `[notes](${uploaded.url as string})`,
  });
  t.equal(withFile.result, 'success');
  t.match(await linked, [{ type: 'message', message: { id: withFile.id } }]);

  const history = await z.messages.retrieve({
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: [{ operator: 'stream', operand: 'zulip-js' }],
  });
  t.same(
    (history.messages as { id: number }[]).map((m) => m.id),
    [id, withFile.id],
    'fetched back',
  );
});
