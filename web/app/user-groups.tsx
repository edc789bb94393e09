/**
 * The settings' **User groups** panel (web/state/user-groups.ts holds its logic): the
 * organization's groups, each with its description and how many are in it, the deactivated ones
 * apart; a group opened shows its members (people and subgroups). Those the realm lets create
 * groups create one (name, description, people: the Create channel dialog's fields and people
 * picker); a group's managers rename and describe it (the channel settings' editor), add and
 * remove members, set its permissions and deactivate it; others may join or leave it as its
 * settings say. What the user may not do is not offered; what
 * the server refuses anyway is shown as it says it. The groups are ChatState's, kept live by the
 * `user_group` events (another browser's changes show at once). The API has no reactivation: a
 * deactivated group is listed, read-only but for its name and description.
 * Registered with `addSettingsPanel`; settings-panels.ts imports this module.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ChatState } from '../state/chat.js';
import { DEFAULT_LIMITS, sortMembers } from '../state/channel-forms.js';
import { ApiError } from '../../src/client/api.js';
import { groupDisplayName } from '../../src/client/group-names.js';
import {
  GROUP_PERMISSIONS,
  MAX_GROUP_NAME_LENGTH,
  deactivationRefusal,
  filterGroups,
  groupLists,
  groupNameProblem,
  groupRights,
  memberCount,
  mayCreateGroups,
  permissionChoices,
  subgroupChoices,
  subgroupsOf,
  type GroupRow,
  type Viewer,
} from '../state/user-groups.js';
import { everyoneIn } from '../state/profile.js';
import { Avatar, FormError } from './bits.js';
import {
  AddPeople,
  EditNameAndDescription,
  NameAndDescription,
  PersonPicker,
} from './channel-dialogs.js';
import type { Controller } from './controller.js';
import { Icon } from './icons.js';
import { useLive } from './live.js';
import { addSettingsPanel, errorText } from './settings.js';
import { track } from './track.js';

const LIMITS = { maxName: MAX_GROUP_NAME_LENGTH, maxDescription: DEFAULT_LIMITS.maxDescription };

function viewerOf(s: ChatState): Viewer {
  return {
    userId: s.selfId,
    role: s.self.role ?? 400,
    realm: (name) => s.realm.settings[name],
    groups: s.groups,
  };
}

function UserGroups({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.settings);
  const [openId, setOpenId] = useState<number | null>(null);
  const [creating, setCreating] = useState(false);
  const [query, setQuery] = useState('');
  // The row to give the focus back to, once back in the list.
  const back = useRef<number | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const v = viewerOf(s);
  const open = openId !== null && s.groups.has(openId) ? openId : null;
  useLayoutEffect(() => {
    if (open !== null || back.current === null) return;
    list.current?.querySelector<HTMLElement>(`[data-group-id="${back.current}"]`)?.focus();
    back.current = null;
  }, [open]);
  if (open !== null)
    return (
      <GroupDetails
        key={open}
        c={c}
        s={s}
        groupId={open}
        onBack={() => {
          back.current = open;
          setOpenId(null);
        }}
      />
    );
  const lists = groupLists(s.groups, s.selfId);
  const active = filterGroups(lists.active, query);
  const deactivated = filterGroups(lists.deactivated, query);
  const all = lists.active.length + lists.deactivated.length;
  const row = (g: GroupRow) => (
    <li key={g.id}>
      <button
        class="group-row"
        type="button"
        data-group-id={g.id}
        onClick={() => {
          setCreating(false);
          setOpenId(g.id);
        }}
      >
        <span class="group-row-name">
          <Icon name="group" />
          {g.name}
        </span>
        {g.description && <span class="group-row-description">{g.description}</span>}
        <span class="muted-text">
          {memberCount(g.count)}
          {g.mine ? ' · you are a member' : ''}
        </span>
      </button>
    </li>
  );
  return (
    <div class="user-groups" ref={list}>
      <p class="muted-text">
        A group is mentioned as one (@name notifies everyone in it) and can be given permissions
        together. A group can hold other groups.
      </p>
      {creating ? (
        <CreateGroup
          c={c}
          s={s}
          onDone={(id) => {
            setCreating(false);
            if (id !== null) setOpenId(id);
          }}
        />
      ) : (
        mayCreateGroups(v) && (
          <button class="btn primary" type="button" onClick={() => setCreating(true)}>
            <Icon name="plus" /> Create a group
          </button>
        )
      )}
      {all > 0 && (
        <input
          class="field group-filter"
          type="search"
          aria-label="Filter groups"
          placeholder="Filter groups"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      )}
      {all === 0 ? (
        <p class="muted-text">No groups yet.</p>
      ) : active.length === 0 && deactivated.length === 0 ? (
        <p class="muted-text" role="status">
          No group matches.
        </p>
      ) : active.length === 0 ? (
        <p class="muted-text">{query.trim() ? 'No active group matches.' : 'No active groups.'}</p>
      ) : (
        <ul class="group-list" aria-label="User groups">
          {active.map(row)}
        </ul>
      )}
      {deactivated.length > 0 && (
        <>
          <h4 class="group-heading" id="deactivated-groups-title">
            Deactivated groups
          </h4>
          <ul class="group-list deactivated" aria-labelledby="deactivated-groups-title">
            {deactivated.map(row)}
          </ul>
        </>
      )}
    </div>
  );
}

/** A new group: its name, description and people (the user among them at first). */
function CreateGroup({
  c,
  s,
  onDone,
}: {
  c: Controller;
  s: ChatState;
  onDone: (id: number | null) => void;
}) {
  const nameField = useRef<HTMLInputElement>(null);
  const [name, setName, nameNow] = useLive('');
  const [description, setDescription, descriptionNow] = useLive('');
  const [members, setMembers, membersNow] = useLive<number[]>([s.selfId]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy, busyNow] = useLive(false);
  useLayoutEffect(() => nameField.current?.focus(), []);
  const submit = async () => {
    const wrong = groupNameProblem(nameNow.current, s.groups);
    setError(wrong);
    if (wrong) return;
    setBusy(true);
    try {
      const r = await c.client.request<{ group_id?: number }>('POST', '/user_groups/create', {
        name: nameNow.current.trim(),
        description: descriptionNow.current.trim(),
        members: membersNow.current,
      });
      setBusy(false);
      onDone(typeof r.group_id === 'number' ? r.group_id : null);
    } catch (e) {
      setBusy(false);
      setError(errorText(e));
    }
  };
  return (
    <form
      class="group-create"
      aria-labelledby="group-create-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!busyNow.current) void submit();
      }}
    >
      <h4 id="group-create-title">New group</h4>
      <NameAndDescription
        what="group"
        nameRef={nameField}
        limits={LIMITS}
        name={name}
        setName={setName}
        description={description}
        setDescription={setDescription}
        rows={2}
        placeholder="What is it for? (optional)"
      />
      <div class="stack-field">
        <label for="group-create-people">Members</label>
        <PersonPicker
          c={c}
          id="group-create-people"
          label="Add a person to the group"
          chosen={members}
          onChange={setMembers}
        />
      </div>
      <FormError error={error} />
      <div class="choice-row">
        <button class="btn primary" type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create group'}
        </button>
        <button class="btn" type="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** One group: name and description, members and subgroups, and what the user may do. */
function GroupDetails({
  c,
  s,
  groupId,
  onBack,
}: {
  c: Controller;
  s: ChatState;
  groupId: number;
  onBack: () => void;
}) {
  // Each part reads the groups itself: it redraws on their changes even when its parent's
  // props are the same (the signals' integration skips such a child otherwise).
  track(s.rev.users, s.rev.settings);
  const g = s.groups.get(groupId)!;
  const rights = groupRights(groupId, viewerOf(s));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => title.current?.focus(), []);
  // A button that goes once its change comes back as an event (a Remove, Join, Leave,
  // Deactivate): when it has gone, the focus it had stays in the panel, on the title.
  const going = useRef<(() => boolean) | null>(null);
  useLayoutEffect(() => {
    if (!going.current?.()) return;
    going.current = null;
    const now = document.activeElement;
    if (!now || now === document.body || !now.isConnected) title.current?.focus();
  });
  const now = () => s.groups.get(groupId);
  /** A change of its members or subgroups: null, or the server's refusal. */
  const send = async (params: Record<string, unknown>): Promise<string | null> => {
    try {
      await c.client.request('POST', `/user_groups/${groupId}/members`, params);
      return null;
    } catch (e) {
      going.current = null;
      return errorText(e);
    }
  };
  /** The same, busy meanwhile, its refusal shown as the server words it; true when done. */
  const members = async (params: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    const failed = await send(params);
    setError(failed);
    setBusy(false);
    return failed === null;
  };
  const deactivate = async () => {
    const ok = await c.ask({
      title: `Deactivate ${g.name}?`,
      text: 'It can no longer be mentioned or given permissions; its members stay as they are. The API offers no way to reactivate it.',
      action: 'Deactivate',
      danger: true,
    });
    if (!ok) return;
    going.current = () => now()?.deactivated === true;
    setBusy(true);
    setError(null);
    try {
      await c.client.request('POST', `/user_groups/${groupId}/deactivate`);
    } catch (e) {
      going.current = null;
      // In use: where, by name (as the reference's explanation of why it cannot).
      setError(
        deactivationRefusal(errorText(e), e instanceof ApiError ? e.body : undefined, {
          group: (id) => {
            const o = s.groups.get(id);
            return o && groupDisplayName(o.name);
          },
          channel: (id) => s.channels.get(id)?.name,
        }),
      );
    }
    setBusy(false);
  };
  const subgroups = subgroupsOf(groupId, s.groups);
  const people = sortMembers(g.members, s.users);
  const count = everyoneIn(groupId, s.groups).size;
  const deactivated = g.deactivated === true;
  return (
    <div class="group-details" role="group" aria-labelledby="group-title">
      <button class="link-btn group-back" type="button" onClick={onBack}>
        <span aria-hidden="true">←</span> All groups
      </button>
      <h4 id="group-title" ref={title} tabIndex={-1}>
        {g.name}
        {deactivated && <span class="group-badge">deactivated</span>}
      </h4>
      {deactivated && (
        <p class="muted-text">
          This group is deactivated: it cannot be mentioned or given permissions, and its members
          stay as they were.
        </p>
      )}
      <FormError error={error} />
      <GroupGeneral c={c} s={s} groupId={groupId} may={rights.manage} onError={setError} />
      <section class="group-members-section" aria-labelledby="group-members-title">
        <h5 id="group-members-title">
          Members ({count}
          {subgroups.length > 0 ? ', subgroups included' : ''})
        </h5>
        {rights.addMembers && (
          <>
            <AddPeople
              c={c}
              id="group-add-people"
              label="Add people to the group"
              members={new Set(g.members)}
              add={(add) => send({ add })}
              onError={setError}
            />
            <AddSubgroup
              choices={subgroupChoices(groupId, s.groups)}
              busy={busy}
              onAdd={(id) => members({ add_subgroups: [id] })}
            />
          </>
        )}
        {people.length === 0 && subgroups.length === 0 ? (
          <p class="muted-text">This group has no members.</p>
        ) : (
          <ul class="member-list" aria-labelledby="group-members-title">
            {subgroups.map((sg) => (
              <li key={`g${sg.id}`}>
                <span class="group-icon small" aria-hidden="true">
                  <Icon name="group" />
                </span>
                <span class="member-name">
                  {sg.name}
                  <span class="muted-text"> (group{sg.deactivated ? ', deactivated' : ''})</span>
                </span>
                {rights.removeMembers && (
                  <button
                    class="btn small"
                    type="button"
                    aria-label={`Remove the group ${sg.name}`}
                    disabled={busy}
                    onClick={() => {
                      going.current = () => !now()?.direct_subgroup_ids?.includes(sg.id);
                      void members({ delete_subgroups: [sg.id] });
                    }}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
            {people.map((uid) => {
              const name = s.userName(uid);
              return (
                <li key={uid}>
                  <Avatar small id={uid} name={name} url={s.users.get(uid)?.avatar_url} />
                  <span class="member-name">
                    {name}
                    {uid === s.selfId && <span class="muted-text"> (you)</span>}
                  </span>
                  {rights.removeMembers && (
                    <button
                      class="btn small"
                      type="button"
                      aria-label={`Remove ${name}`}
                      disabled={busy}
                      onClick={() => {
                        going.current = () => !now()?.members.includes(uid);
                        void members({ delete: [uid] });
                      }}
                    >
                      Remove
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </section>
      {rights.manage && <GroupPermissions c={c} s={s} groupId={groupId} onError={setError} />}
      {(rights.join || rights.leave || rights.deactivate) && (
        <div class="choice-row group-actions">
          {rights.join && (
            <button
              class="btn"
              type="button"
              disabled={busy}
              onClick={() => {
                going.current = () => now()?.members.includes(s.selfId) === true;
                void members({ add: [s.selfId] });
              }}
            >
              Join group
            </button>
          )}
          {rights.leave && (
            <button
              class="btn"
              type="button"
              disabled={busy}
              onClick={() => {
                going.current = () => now()?.members.includes(s.selfId) !== true;
                void members({ delete: [s.selfId] });
              }}
            >
              Leave group
            </button>
          )}
          {rights.deactivate && (
            <button
              class="btn danger"
              type="button"
              disabled={busy}
              onClick={() => void deactivate()}
            >
              Deactivate group
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/** The group's own permissions, each changed as it is chosen (for its managers). */
function GroupPermissions({
  c,
  s,
  groupId,
  onError,
}: {
  c: Controller;
  s: ChatState;
  groupId: number;
  onError: (e: string | null) => void;
}) {
  track(s.rev.users);
  const [busy, setBusy] = useState(false);
  const change = async (name: string, to: number) => {
    const old = (s.groups.get(groupId) as Record<string, unknown> | undefined)?.[name];
    setBusy(true);
    onError(null);
    try {
      await c.client.request('PATCH', `/user_groups/${groupId}`, {
        [name]: old === undefined ? { new: to } : { new: to, old },
      });
    } catch (e) {
      onError(errorText(e));
    }
    setBusy(false);
  };
  return (
    <section class="group-permissions" aria-labelledby="group-permissions-title">
      <h5 id="group-permissions-title">Permissions</h5>
      {GROUP_PERMISSIONS.map((perm) => {
        const p = permissionChoices(perm, groupId, s.groups, (id) => s.userName(id));
        return (
          <label class="stack" key={perm.name}>
            {perm.label}
            <select
              class="field"
              name={perm.name}
              disabled={busy}
              value={p.current === null ? '' : String(p.current)}
              onChange={(e) => {
                const v = e.currentTarget.value;
                if (v !== '') void change(perm.name, Number(v));
              }}
            >
              {p.custom !== null && <option value="">{p.custom}</option>}
              {p.choices.map((o) => (
                <option key={o.id} value={String(o.id)}>
                  {o.name}
                </option>
              ))}
            </select>
          </label>
        );
      })}
    </section>
  );
}

/** The description, and for the group's managers its edit (name and description). */
function GroupGeneral({
  c,
  s,
  groupId,
  may,
  onError,
}: {
  c: Controller;
  s: ChatState;
  groupId: number;
  may: boolean;
  onError: (e: string | null) => void;
}) {
  track(s.rev.users);
  const g = s.groups.get(groupId)!;
  return (
    <EditNameAndDescription
      what="group"
      name={g.name}
      description={g.description}
      may={may}
      limits={LIMITS}
      onError={onError}
      check={(name) => groupNameProblem(name, s.groups, groupId)}
      save={async (p) => {
        try {
          await c.client.request('PATCH', `/user_groups/${groupId}`, p);
          return null;
        } catch (e) {
          return errorText(e);
        }
      }}
    >
      {g.description.trim() === '' ? (
        <p class="channel-description muted-text">No description.</p>
      ) : (
        <p class="channel-description">{g.description}</p>
      )}
    </EditNameAndDescription>
  );
}

/** A group to add as a subgroup (those that make no cycle). */
function AddSubgroup({
  choices,
  busy,
  onAdd,
}: {
  choices: { id: number; name: string }[];
  busy: boolean;
  onAdd: (id: number) => Promise<boolean>;
}) {
  const [sub, setSub, subNow] = useLive('');
  if (choices.length === 0) return null;
  return (
    <form
      class="add-members"
      onSubmit={(e) => {
        e.preventDefault();
        const id = Number(subNow.current);
        if (busy || !id) return;
        void onAdd(id).then((ok) => ok && setSub(''));
      }}
    >
      <select
        class="field"
        aria-label="Add a group to this group"
        value={sub}
        onChange={(e) => setSub(e.currentTarget.value)}
      >
        <option value="">Add a group…</option>
        {choices.map((o) => (
          <option key={o.id} value={String(o.id)}>
            {o.name}
          </option>
        ))}
      </select>
      <button class="btn" type="submit" disabled={busy || sub === ''}>
        Add group
      </button>
    </form>
  );
}

addSettingsPanel({
  id: 'groups',
  title: 'User groups',
  section: 'organization',
  order: 30,
  // Guests do not see the organization's groups (GET /user_groups refuses them).
  visible: (c) => (c.state.value?.self.role ?? 400) < 600,
  render: (c) => <UserGroups c={c} />,
});
