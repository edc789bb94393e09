/**
 * web/state/realm-exports.ts: an export's state (running, ready, failed, deleted), the rows
 * (newest first, who asked, what kind, only a ready one deletable); the reducer keeps the list
 * from GET /export/realm, then from each `realm_export` event (the whole list).
 */
import t from 'tap';
import type { RegisterResponse, ServerEvent } from '../../src/client/types.js';
import { ChatState } from '../../web/state/chat.js';
import {
  EXPORT_FULL_WITH_CONSENT,
  exportKind,
  exportRows,
  exportState,
  type RealmExport,
} from '../../web/state/realm-exports.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const exp = (id: number, o: Partial<RealmExport> = {}): RealmExport => ({
  id,
  export_time: 1000 + id,
  acting_user_id: 3,
  export_url: null,
  deleted_timestamp: null,
  failed_timestamp: null,
  pending: true,
  export_type: 1,
  ...o,
});

t.test('states', (t) => {
  t.equal(exportState(exp(1)), 'pending');
  t.equal(exportState(exp(1, { pending: false, export_url: 'https://x/a.tar.gz' })), 'ready');
  t.equal(exportState(exp(1, { pending: false, failed_timestamp: 5 })), 'failed');
  t.equal(
    exportState(exp(1, { pending: false, export_url: null, deleted_timestamp: 9 })),
    'deleted',
  );
  t.equal(exportState(exp(1, { pending: false })), 'pending', 'no link yet: not ready');
  t.equal(exportKind(1), 'Public data');
  t.match(exportKind(EXPORT_FULL_WITH_CONSENT), /consenting/);
  t.end();
});

t.test('rows: newest first, only a ready one deletable', (t) => {
  const rows = exportRows(
    [
      exp(1, { pending: false, export_url: 'u' }),
      exp(3),
      exp(2, { pending: false, failed_timestamp: 1, acting_user_id: null }),
    ],
    (id) => (id === 3 ? 'Iago' : '?'),
  );
  t.same(
    rows.map((r) => [r.e.id, r.by, r.state, r.deletable]),
    [
      [3, 'Iago', 'pending', false],
      [2, 'Unknown', 'failed', false],
      [1, 'Iago', 'ready', true],
    ],
  );
  t.end();
});

t.test('the reducer: fetched, then each event', (t) => {
  const clock = new FakeTimers();
  const s = new ChatState(
    {
      queue_id: 'q',
      last_event_id: -1,
      user_id: 3,
      email: 'me@x',
      full_name: 'Me',
      realm_users: [],
      unread_msgs: { count: 0, streams: [], pms: [], huddles: [], mentions: [] },
    } as unknown as RegisterResponse,
    { now: clock.now, timers: clock.timers },
  );
  t.equal(s.realmExports, null, 'not fetched yet');
  s.setRealmExports([exp(1)]);
  t.same(s.realmExports, [exp(1)]);
  const rev = s.rev.extras.value;
  s.apply([
    { id: 1, type: 'realm_export', exports: [exp(1, { pending: false, export_url: 'u' })] },
  ] as ServerEvent[]);
  t.equal(s.realmExports?.[0]?.export_url, 'u', 'the event’s list');
  t.equal(s.rev.extras.value, rev + 1, 'the panel redraws');
  t.end();
});
