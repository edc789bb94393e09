/**
 * Bodies cut at every byte (Part 1 of issue 29): for a few representative requests — an upload
 * (multipart with a file part) with and without credentials, a message sent as a form whose `to`
 * is JSON, a settings change as a JSON object, and the same upload chunked — each body is cut at
 * every byte position, declared at the cut (Content-Length, or chunked with its last chunk), and
 * the upload also cut off by a client that goes away (half-close, reset) at every byte. Each is
 * answered within 5 s and never 5xx, errors in the API's format (a complete request), releases
 * what it held (nothing in flight, no received file left in DATA_DIR/tmp), and the server serves
 * on; the database passes `PRAGMA integrity_check` at the end. test/helpers/cut-bodies.ts.
 */
import crypto from 'node:crypto';
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import {
  describeCut,
  encodeBody,
  sendCut,
  type BodyEncoding,
  type CutCase,
  type Transfer,
} from '../helpers/cut-bodies.js';
import { currentKeys } from '../helpers/fuzz.js';
import type { Ending } from '../helpers/raw-http.js';
import { startServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';

type Sweep = {
  what: string;
  method: string;
  target: string;
  who: string | null;
  encoding: BodyEncoding;
  transfer: Transfer;
  endings: readonly Ending[];
  fields: readonly (readonly [string, string])[];
  file?: Buffer;
  chunkSizes?: readonly number[];
};

t.test('bodies cut at every byte are answered well and release what they held', async (t) => {
  const ts = await startServer(t);
  const verona = await createChannel(ts.api, 'hamlet', 'Verona');
  const file = Buffer.from('the first bytes of a file, \u00e9\u00e8 and more\r\n--not a boundary');
  const sweeps: Sweep[] = [
    {
      what: 'an upload without credentials',
      method: 'POST',
      target: '/api/v1/user_uploads',
      who: null,
      encoding: 'multipart-file',
      transfer: 'length',
      endings: ['complete', 'fin', 'reset'],
      fields: [],
      file,
    },
    {
      what: 'an upload',
      method: 'POST',
      target: '/api/v1/user_uploads',
      who: 'hamlet',
      encoding: 'multipart-file',
      transfer: 'length',
      endings: ['complete', 'fin'],
      fields: [['note', 'a field before the file']],
      file,
    },
    {
      what: 'an upload, chunked',
      method: 'POST',
      target: '/api/v1/user_uploads',
      who: 'hamlet',
      encoding: 'multipart-file',
      transfer: 'chunked',
      endings: ['complete', 'fin'],
      fields: [],
      file,
      chunkSizes: [7, 30, 1, 64],
    },
    {
      what: 'a message as a form with a JSON field',
      method: 'POST',
      target: '/api/v1/messages',
      who: 'hamlet',
      encoding: 'form',
      transfer: 'length',
      endings: ['complete'],
      fields: [
        ['type', 'stream'],
        ['to', JSON.stringify([verona])],
        ['topic', 'cut bodies'],
        ['content', 'hello \u00e9 **there**'],
      ],
    },
    {
      what: 'a message as multipart fields',
      method: 'POST',
      target: '/api/v1/messages',
      who: 'desdemona',
      encoding: 'multipart',
      transfer: 'length',
      endings: ['complete'],
      fields: [
        ['type', 'stream'],
        ['to', String(verona)],
        ['topic', 'cut bodies'],
        ['content', 'multipart'],
      ],
    },
    {
      what: 'settings as a JSON object',
      method: 'PATCH',
      target: '/api/v1/settings',
      who: 'hamlet',
      encoding: 'json',
      transfer: 'length',
      endings: ['complete'],
      fields: [
        ['full_name', 'Hamlet \u00e9'],
        ['enter_sends', 'true'],
      ],
    },
  ];
  let sent = 0;
  for (const s of sweeps) {
    const { body } = encodeBody(s.encoding, s.fields, s.file ?? Buffer.alloc(0));
    let failures = 0;
    const statuses = new Map<string, number>();
    for (const ending of s.endings) {
      // Chunked and cut off: the cut runs over the framed stream, which is longer.
      const length =
        s.transfer === 'chunked' && ending !== 'complete' ? body.length * 2 : body.length;
      for (let cut = 0; cut <= length; cut++) {
        const c: CutCase = {
          method: s.method,
          target: s.target,
          who: s.who,
          encoding: s.encoding,
          transfer: s.transfer,
          ending,
          cut,
          fields: s.fields,
          file: s.file ?? Buffer.alloc(0),
          chunkSizes: s.chunkSizes ?? [],
        };
        const { problems, answer } = await sendCut(ts, c, currentKeys(ts));
        sent++;
        const key = `${ending} ${answer?.status ?? 'none'}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (problems.length > 0 && ++failures <= 3) {
          t.fail(`${s.what}: ${problems.join('; ')}\n  ${describeCut(c)}`, {
            answer: answer?.body.toString('utf8').slice(0, 300),
          });
        }
      }
    }
    t.equal(
      failures,
      0,
      `${s.what}: every cut answered well (${[...statuses].map(([k, n]) => `${k}×${n}`).join(', ')})`,
    );
    assertSuccess(t, await ts.api.get('hamlet', 'users/me'), `${s.what}: still serving`);
  }
  t.comment(`${sent} cut requests`);
  const integrity = ts.server.store.db.prepare('PRAGMA integrity_check').pluck().all();
  t.same(integrity, ['ok'], 'PRAGMA integrity_check: ok');
  assertSuccess(
    t,
    await upload(ts.api, 'hamlet', [{ filename: 'whole.bin', data: crypto.randomBytes(100) }]),
    'a whole upload still works',
  );
});
