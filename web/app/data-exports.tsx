/**
 * The **Data exports** settings panel, for administrators (web/state/realm-exports.ts): start a
 * public export (after confirming), see each export's state as `realm_export` events bring it
 * (running, ready with its download link, failed, deleted), delete a finished one (after
 * confirming). Registered with `addSettingsPanel`; settings-panels.ts imports this module.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { EXPORT_PUBLIC, exportRows, STATE_TEXT, type RealmExport } from '../state/realm-exports.js';
import type { Controller } from './controller.js';
import { FormError } from './bits.js';
import { fullTime } from './format.js';
import { addSettingsPanel, errorText } from './settings.js';
import { Outcome, RowAction, useAction } from './row-action.js';
import { shortDate, useRefocus } from './settings-more.js';
import { track } from './track.js';

function DataExports({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras, s.rev.users);
  const [loadError, setLoadError] = useState<string | null>(null);
  const act = useAction();
  const start = useRef<HTMLButtonElement>(null);
  useRefocus(s.realmExports, () => start.current);
  useEffect(() => {
    c.client
      .request<{ exports: RealmExport[] }>('GET', '/export/realm')
      .then((r) => s.setRealmExports(r.exports))
      .catch((e: unknown) => setLoadError(errorText(e)));
  }, [c, s]);
  const begin = async () => {
    const ok = await c.ask({
      title: 'Export the organization?',
      text:
        'A public export holds the organization’s settings, users, public channels and their ' +
        'messages and uploads — no private channels or direct messages. It runs in the ' +
        'background; its download link appears here when it is ready.',
      action: 'Start export',
    });
    if (!ok) return;
    await act.run(
      () => c.client.request('POST', '/export/realm', { export_type: EXPORT_PUBLIC }),
      'Export started.',
    );
  };
  const list = s.realmExports;
  const rows = list ? exportRows(list, (id) => s.userName(id)) : [];
  return (
    <>
      <p class="muted-text">
        Export the organization’s public data: an archive another server can import.
      </p>
      <p>
        <button
          ref={start}
          class="btn primary"
          type="button"
          disabled={act.busy}
          onClick={() => void begin()}
        >
          Start a public export
        </button>
      </p>
      <Outcome error={act.error} done={act.done} />
      {!list ? (
        loadError ? (
          <FormError error={loadError} />
        ) : (
          <p class="muted-text">Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p class="muted-text">There are no exports yet.</p>
      ) : (
        <table class="more-table" aria-label="Data exports">
          <thead>
            <tr>
              <th>Requested by</th>
              <th>Time</th>
              <th>Contents</th>
              <th>Status</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.e.id} data-export={r.e.id} data-state={r.state}>
                <td class="more-name">{r.by}</td>
                <td class="more-nowrap" data-label="Time">
                  <time
                    dateTime={new Date(r.e.export_time * 1000).toISOString()}
                    title={fullTime(r.e.export_time)}
                  >
                    {shortDate(r.e.export_time * 1000)}
                  </time>
                </td>
                <td data-label="Contents">{r.kind}</td>
                <td data-label="Status" role={r.state === 'pending' ? 'status' : undefined}>
                  {r.state === 'ready' && r.e.export_url ? (
                    <a href={r.e.export_url} download>
                      Download
                    </a>
                  ) : (
                    STATE_TEXT[r.state]
                  )}
                </td>
                <td>
                  {r.deletable && (
                    <RowAction
                      label="Delete"
                      name={`Delete the export of ${fullTime(r.e.export_time)}`}
                      danger
                      confirm={{
                        c,
                        title: 'Delete this export?',
                        text: `The archive of the export of ${fullTime(r.e.export_time)} is deleted for good; its download link stops working.`,
                      }}
                      act={act}
                      request={() => c.client.request('DELETE', `/export/realm/${r.e.id}`)}
                      said="Export deleted."
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

// Near the end of the organization's part (Mail outbox is 90).
addSettingsPanel({
  id: 'data-exports',
  title: 'Data exports',
  section: 'organization',
  order: 85,
  visible: (c) => c.state.value?.isAdmin === true,
  render: (c) => <DataExports c={c} />,
});
