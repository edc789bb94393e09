/**
 * The settings' **Users** panel, as the reference's Organization settings → Users: the active
 * users (name, the address this user may see, role, when last active), the deactivated ones, and
 * the bots with their owners; a filter; a page of rows at a time ("Show more"), never the whole
 * of a large organization. Every member sees it; administrators also change a role (only owners
 * make or unmake owners), deactivate someone else after a confirmation naming them (their bots
 * go with them, as the server does), and reactivate. What the server refuses (the last owner) is
 * said under the row. The lists are ChatState's users, kept by the `realm_user` events: another
 * administrator's changes show while the panel is open. A name opens the person's profile card.
 * When the server sends mail, the deactivation of a person (not a bot) can tell them by e-mail,
 * with an optional comment quoted in the mail (the reference's "Notify this user by e-mail").
 * Decisions in web/state/users.ts; registered with `addSettingsPanel` (settings-panels.ts).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { User } from '../../src/client/types.js';
import { roleName, shownEmail } from '../state/profile.js';
import {
  botsOwnedBy,
  canDeactivate,
  canReactivate,
  reactivationText,
  deactivationText,
  isAdministrator,
  lastActiveText,
  PAGE_SIZE,
  pageOf,
  roleChoices,
  roleFilterOptions,
  roleOf,
  stepDownQuestion,
  usersOf,
  withRole,
  type UsersTab,
} from '../state/users.js';
import { BOT_TYPE_NAMES } from '../state/bots.js';
import { Avatar, FormError } from './bits.js';
import type { Controller } from './controller.js';
import { addSettingsPanel, errorText } from './settings.js';
import { track } from './track.js';

const TABS: { id: UsersTab; title: string }[] = [
  { id: 'active', title: 'Users' },
  { id: 'deactivated', title: 'Deactivated users' },
  { id: 'bots', title: 'Bots' },
];

const EMPTY: Record<UsersTab, string> = {
  active: 'No users.',
  deactivated: 'No deactivated users.',
  bots: 'No bots.',
};

/** The longest comment the server takes in a deactivation notice (its max_length). */
const MAX_COMMENT = 2000;

/** What the deactivation's confirmation had chosen about the mail, read once it is answered. */
type Notice = { send: boolean; comment: string };

/** The confirmation's mail choice: the box, and the comment's text area once it is ticked. */
function NotifyByMail({ notice }: { notice: Notice }) {
  const [send, setSend] = useState(notice.send);
  return (
    <div class="deactivate-notice">
      <label class="check">
        <input
          type="checkbox"
          checked={send}
          onChange={(e) => {
            notice.send = e.currentTarget.checked;
            setSend(notice.send);
          }}
        />
        <span>Notify this user by e-mail</span>
      </label>
      {send && (
        <textarea
          class="field"
          rows={3}
          maxLength={MAX_COMMENT}
          aria-label="Comment for the e-mail (optional)"
          placeholder="A comment to include in the e-mail (optional)"
          onInput={(e) => (notice.comment = e.currentTarget.value)}
        />
      )}
    </div>
  );
}

/** A failure of an action on one user, said under their row. */
type Problem = { userId: number; text: string };

function Users({ c }: { c: Controller }) {
  const s = c.state.value!;
  const usersRev = s.rev.users.value;
  // The last active column follows presence (without filtering the lists again).
  track(s.rev.presence);
  const [tab, setTab] = useState<UsersTab>('active');
  const [filter, setFilter] = useState('');
  /** The role filter of the people's tabs (0: every role). */
  const [role, setRole] = useState(0);
  const [shown, setShown] = useState(PAGE_SIZE);
  const [problem, setProblem] = useState<Problem | null>(null);
  const search = useRef<HTMLInputElement>(null);
  const viewer = s.self;
  const admin = isAdministrator(viewer);
  // As the Invite panel decides whether e-mail invitations are offered.
  const mailEnabled = c.serverSettings.outgoing_mail_enabled === true;

  // Each tab's list, filtered: again only when the people or the filter change.
  const lists = useMemo(
    () => ({
      active: usersOf(s.users.values(), 'active', filter),
      deactivated: usersOf(s.users.values(), 'deactivated', filter),
      bots: usersOf(s.users.values(), 'bots', filter),
    }),
    // `usersRev` stands for the changes of s.users.
    [s, usersRev, filter],
  );
  const list = tab === 'bots' ? lists.bots : withRole(lists[tab], role);
  const { rows, more } = pageOf(list, shown);
  const now = Date.now();

  const choose = (next: UsersTab) => {
    setTab(next);
    setRole(0);
    setShown(PAGE_SIZE);
    setProblem(null);
  };

  /** After a row's account changed state (the row goes to another tab): the focus stays near. */
  const done = (text: string) => {
    c.toast(text, 'info');
    search.current?.focus({ preventScroll: true });
  };

  const deactivate = async (u: User) => {
    setProblem(null);
    // A bot has no one to read its mail.
    const notice: Notice | null = mailEnabled && !u.is_bot ? { send: false, comment: '' } : null;
    const ok = await c.ask({
      title: `Deactivate ${u.full_name}?`,
      text: deactivationText(u, botsOwnedBy(s.users.values(), u.user_id)),
      action: 'Deactivate',
      danger: true,
      extra: notice && <NotifyByMail notice={notice} />,
    });
    if (!ok) return;
    try {
      await c.client.request(
        'DELETE',
        `/users/${u.user_id}`,
        // Sent (even empty) only when asked for: its presence is what asks for the mail.
        notice?.send ? { deactivation_notification_comment: notice.comment.trim() } : undefined,
      );
      done(`${u.full_name} was deactivated.`);
    } catch (e) {
      setProblem({ userId: u.user_id, text: errorText(e) });
    }
  };

  const reactivate = async (u: User) => {
    setProblem(null);
    const ok = await c.ask({
      title: `Reactivate ${u.full_name}?`,
      text: reactivationText(u),
      action: 'Reactivate',
    });
    if (!ok) return;
    try {
      await c.client.request('POST', `/users/${u.user_id}/reactivate`);
      done(`${u.full_name} was reactivated.`);
    } catch (e) {
      setProblem({ userId: u.user_id, text: errorText(e) });
    }
  };

  if (!s.usersComplete) return <p class="muted-text">Loading…</p>;

  return (
    <>
      <div class="choice-row users-tabs" role="group" aria-label="Which users">
        {TABS.map((t) => (
          <button
            key={t.id}
            class="btn"
            type="button"
            aria-pressed={tab === t.id}
            onClick={() => choose(t.id)}
          >
            {t.title}
            <span class="users-count">{lists[t.id].length.toLocaleString('en-US')}</span>
          </button>
        ))}
      </div>
      <div class="users-filters">
        <input
          ref={search}
          class="field users-filter"
          type="search"
          aria-label="Filter users"
          placeholder="Filter by name or e-mail"
          value={filter}
          onInput={(e) => {
            setFilter(e.currentTarget.value);
            setShown(PAGE_SIZE);
          }}
        />
        {tab !== 'bots' && (
          <select
            class="field users-role-filter"
            aria-label="Filter by role"
            value={String(role)}
            onChange={(e) => {
              setRole(Number(e.currentTarget.value));
              setShown(PAGE_SIZE);
            }}
          >
            {roleFilterOptions(lists[tab]).map((o) => (
              <option key={o.value} value={String(o.value)}>
                {o.label}
              </option>
            ))}
          </select>
        )}
      </div>
      {list.length === 0 ? (
        <p class="muted-text" role="status">
          {filter.trim() !== ''
            ? `No one matches “${filter.trim()}”.`
            : role !== 0
              ? 'No one has this role.'
              : EMPTY[tab]}
        </p>
      ) : (
        <ul class="users-list" aria-label={TABS.find((t) => t.id === tab)!.title}>
          {rows.map((u) => (
            <UserRow
              key={u.user_id}
              c={c}
              u={u}
              viewer={viewer}
              lastActive={
                tab === 'active' && !s.realm.presenceDisabled
                  ? lastActiveText(
                      s.presenceOf(u.user_id),
                      s.presence.lastActive(u.user_id),
                      u.date_joined,
                      now,
                    )
                  : null
              }
              owner={
                u.is_bot && typeof u.bot_owner_id === 'number'
                  ? { id: u.bot_owner_id, name: s.userName(u.bot_owner_id) }
                  : null
              }
              problem={problem?.userId === u.user_id ? problem.text : null}
              onDeactivate={admin && canDeactivate(viewer, u) ? () => void deactivate(u) : null}
              onReactivate={admin && canReactivate(viewer, u) ? () => void reactivate(u) : null}
              onProblem={(text) => setProblem(text === null ? null : { userId: u.user_id, text })}
            />
          ))}
        </ul>
      )}
      {more && (
        <p>
          <button class="btn" type="button" onClick={() => setShown((n) => n + PAGE_SIZE)}>
            {more}
          </button>
        </p>
      )}
    </>
  );
}

function UserRow({
  c,
  u,
  viewer,
  lastActive,
  owner,
  problem,
  onDeactivate,
  onReactivate,
  onProblem,
}: {
  c: Controller;
  u: User;
  viewer: User;
  lastActive: string | null;
  owner: { id: number; name: string } | null;
  problem: string | null;
  onDeactivate: (() => void) | null;
  onReactivate: (() => void) | null;
  onProblem: (text: string | null) => void;
}) {
  const inactive = u.is_active === false;
  const roles = roleChoices(viewer, u);
  const kind = u.is_bot ? (BOT_TYPE_NAMES[u.bot_type ?? 1] ?? 'Bot') : roleName(u);
  return (
    <li class={inactive ? 'user-row inactive' : 'user-row'}>
      <div class="user-main">
        <button
          class="user-who"
          type="button"
          onClick={(e) => c.openCard(u.user_id, e.currentTarget)}
        >
          <Avatar small id={u.user_id} name={u.full_name} url={u.avatar_url} />
          <span class="user-names">
            <strong>
              {u.full_name}
              {u.user_id === viewer.user_id ? ' (you)' : ''}
            </strong>
            <span class="muted-text">{shownEmail(u)}</span>
          </span>
        </button>
        <div class="user-facts muted-text">
          {roles.choices ? null : <span>{kind}</span>}
          {owner && (
            <span>
              Owner:{' '}
              <button
                class="link-btn"
                type="button"
                onClick={(e) => c.openCard(owner.id, e.currentTarget)}
              >
                {owner.name}
              </button>
            </span>
          )}
          {inactive && <span>Deactivated</span>}
          {lastActive && <span>{lastActive}</span>}
        </div>
      </div>
      <span class="user-actions">
        {roles.choices && (
          <RoleEdit
            c={c}
            u={u}
            own={u.user_id === viewer.user_id}
            choices={roles.choices}
            onProblem={onProblem}
          />
        )}
        {onDeactivate && (
          <button class="btn danger" type="button" onClick={onDeactivate}>
            Deactivate
          </button>
        )}
        {onReactivate && (
          <button class="btn" type="button" onClick={onReactivate}>
            Reactivate
          </button>
        )}
      </span>
      {problem && (
        <div class="user-problem">
          <FormError error={problem} />
        </div>
      )}
    </li>
  );
}

/**
 * A user's role, for an administrator: chosen, then saved (a role is not changed by an arrow key
 * going through the menu). The row shows the new role once the server's event says it.
 */
function RoleEdit({
  c,
  u,
  own,
  choices,
  onProblem,
}: {
  c: Controller;
  u: User;
  /** The viewer's own role: stepping down is asked first (the controls go with it). */
  own: boolean;
  choices: readonly { role: number; name: string }[];
  onProblem: (text: string | null) => void;
}) {
  const current = roleOf(u);
  const [pending, setPending] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  // The role changed (saved here, or by someone else): nothing waits to be saved.
  useEffect(() => setPending(null), [current]);
  const chosen = pending ?? current;
  const save = async () => {
    if (pending === null || pending === current) return;
    const question = own ? stepDownQuestion(current, pending) : null;
    if (question && !(await c.ask({ ...question, danger: true }))) return;
    setBusy(true);
    onProblem(null);
    try {
      await c.client.request('PATCH', `/users/${u.user_id}`, { role: pending });
    } catch (e) {
      setPending(null);
      onProblem(errorText(e));
    }
    setBusy(false);
  };
  return (
    <form
      class="user-role"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <select
        class="field"
        aria-label={`Role of ${u.full_name}`}
        value={String(chosen)}
        disabled={busy}
        onChange={(e) => setPending(Number(e.currentTarget.value))}
      >
        {choices.map((r) => (
          <option key={r.role} value={String(r.role)}>
            {r.name}
          </option>
        ))}
      </select>
      {chosen !== current && (
        <>
          <button class="btn primary" type="submit" disabled={busy}>
            Save
          </button>
          <button class="btn" type="button" disabled={busy} onClick={() => setPending(null)}>
            Cancel
          </button>
        </>
      )}
    </form>
  );
}

addSettingsPanel({
  id: 'users',
  title: 'Users',
  section: 'organization',
  order: 20,
  render: (c) => <Users c={c} />,
});
