/**
 * Two settings panels: **Muted users** (one's own: who the user muted and since when, a filter,
 * Unmute; live from the `muted_users` event, so a second tab follows) and, in the organization's
 * part, **Invitations** (the pending e-mail invitations and reusable links the server lists for
 * the user, with Revoke and, for e-mail, Resend; web/state/invitations.ts). Registered with
 * `addSettingsPanel`; settings-panels.ts imports this module.
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { InvitesState, inviteRows, type Invite } from '../state/invitations.js';
import { mutedRows } from '../state/muted-users.js';
import type { Controller } from './controller.js';
import { CopyField } from './copy-field.js';
import { fullTime } from './format.js';
import { requestOf, useChanges } from './live.js';
import { addSettingsPanel } from './settings.js';
import { Outcome, RowAction, useAction } from './row-action.js';
import { shortDate, useRefocus } from './settings-more.js';
import { track } from './track.js';

// ---- Muted users -------------------------------------------------------------------------

function MutedUsersPanel({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.muted, s.rev.users);
  const [filter, setFilter] = useState('');
  const act = useAction();
  const filterField = useRef<HTMLInputElement>(null);
  useRefocus(s.rev.muted.value, () => filterField.current);
  const rows = mutedRows(
    s.mutedUsers,
    (id) => ({ name: s.userName(id), email: s.users.get(id)?.email }),
    filter,
  );
  return (
    <>
      <p class="muted-text">
        A muted user’s messages are hidden behind a notice, do not notify you and are marked as
        read; you do not see them typing, and they are left out of the people list, your direct
        message conversations and the suggestions as you write. Mute someone from their profile
        card.
      </p>
      <input
        ref={filterField}
        class="field more-filter"
        type="search"
        aria-label="Filter muted users"
        placeholder="Filter by name"
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <Outcome error={act.error} done={act.done} />
      {s.mutedUsers.size === 0 ? (
        <p class="muted-text">You have not muted anyone.</p>
      ) : rows.length === 0 ? (
        <p class="muted-text">Nobody muted matches.</p>
      ) : (
        <table class="more-table" aria-label="Muted users">
          <thead>
            <tr>
              <th>User</th>
              <th>Muted since</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-user-id={r.id}>
                <td class="more-name">{r.name}</td>
                <td class="more-nowrap" data-label="Muted since">
                  <time dateTime={new Date(r.since * 1000).toISOString()} title={fullTime(r.since)}>
                    {shortDate(r.since * 1000)}
                  </time>
                </td>
                <td>
                  <RowAction
                    label="Unmute"
                    name={`Unmute ${r.name}`}
                    act={act}
                    request={() => c.client.request('DELETE', `/users/me/muted_users/${r.id}`, {})}
                    said={`Unmuted ${r.name}.`}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

// ---- Invitations -------------------------------------------------------------------------

function InvitationsPanel({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users);
  const st = useMemo(() => new InvitesState(requestOf(c)), [c]);
  useChanges(st);
  // On opening, and whenever the server says they changed (another tab, another administrator,
  // the Invite people panel).
  const changes = s.rev.invites.value;
  useEffect(() => void st.load(), [st, changes]);
  const list = useRef<HTMLDivElement>(null);
  useRefocus(st.invites, () => list.current?.querySelector<HTMLElement>('button'));
  const rows = inviteRows(st.invites, {
    name: (id) => s.userName(id),
    selfId: s.selfId,
    format: (t) => shortDate(t * 1000),
  });
  const revoking = (inv: Invite) =>
    inv.is_multiuse
      ? {
          c,
          title: 'Revoke this invitation link?',
          text: 'Nobody will be able to join with this link any more; those who already joined stay.',
        }
      : {
          c,
          title: `Revoke the invitation to ${inv.email}?`,
          text: 'The link in the e-mail will stop working; you can invite them again later.',
        };
  return (
    <div ref={list}>
      <p class="muted-text">
        {s.isAdmin
          ? 'The organization’s invitations not yet used or expired.'
          : 'Your invitations not yet used or expired.'}{' '}
        Send new ones from Invite people.
      </p>
      <Outcome error={st.error} done={st.done} />
      {!st.loaded ? (
        st.error ? null : (
          <p class="muted-text">Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p class="muted-text">There are no pending invitations.</p>
      ) : (
        <table class="more-table invites-table" aria-label="Pending invitations">
          <thead>
            <tr>
              <th>Invitee</th>
              <th>Invited by</th>
              <th>Role</th>
              <th>Expires</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <Fragment key={r.key}>
                <tr
                  data-invite={r.key}
                  class={r.invite.is_multiuse ? 'invite-has-link' : undefined}
                >
                  <td class="more-name">{r.invitee}</td>
                  <td data-label="Invited by">{r.invitedBy}</td>
                  <td data-label="Role">{r.role}</td>
                  <td class="more-nowrap" data-label="Expires">
                    {r.invite.expiry_date === null ? (
                      r.expires
                    ) : (
                      <time
                        dateTime={new Date(r.invite.expiry_date * 1000).toISOString()}
                        title={fullTime(r.invite.expiry_date)}
                      >
                        {r.expires}
                      </time>
                    )}
                  </td>
                  <td>
                    <div class="more-actions">
                      {!r.invite.is_multiuse && (
                        <RowAction
                          label="Resend"
                          name={`Resend the invitation to ${r.invitee}`}
                          busy={st.busy}
                          run={() => st.resend(r.invite)}
                        />
                      )}
                      <RowAction
                        label="Revoke"
                        name={
                          r.invite.is_multiuse
                            ? `Revoke the invitation link made ${fullTime(r.invite.invited)}`
                            : `Revoke the invitation to ${r.invitee}`
                        }
                        danger
                        confirm={revoking(r.invite)}
                        busy={st.busy}
                        run={() => st.revoke(r.invite)}
                      />
                    </div>
                  </td>
                </tr>
                {/* The link itself, to copy, on its own line under its row. */}
                {r.invite.is_multiuse && (
                  <tr class="invite-link-row" data-invite-link={r.key}>
                    <td colSpan={5}>
                      <CopyField
                        c={c}
                        value={r.invite.link_url ?? ''}
                        label="Reusable invitation link"
                        copied="Link copied."
                      />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

addSettingsPanel({
  id: 'muted-users',
  title: 'Muted users',
  order: 46,
  render: (c) => <MutedUsersPanel c={c} />,
});
// After Invite people (40): what it sent, for those who may invite (and administrators).
addSettingsPanel({
  id: 'pending-invitations',
  title: 'Invitations',
  section: 'organization',
  order: 41,
  visible: (c) => {
    const s = c.state.value;
    return !!s && (s.isAdmin || s.canInviteByEmail() || s.canCreateInviteLink());
  },
  render: (c) => <InvitationsPanel c={c} />,
});
