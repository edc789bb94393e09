/**
 * Creating a channel and a channel's settings, as dialogs over the page (the reference's
 * stream_create and stream_edit): a new channel's name, description, privacy and people; a
 * channel's description and name (for those who may administer it), its privacy, its members
 * (added with the people picker, removed after a confirmation) and Leave. What the server
 * refuses is shown as it says it. The members are fetched as the settings open and kept live by
 * the events (ChatState.members), the rest by the `stream` events.
 */
import type { ComponentChildren, JSX, RefObject } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { mentionCandidates } from '../state/autocomplete.js';
import { isSystemBot } from '../state/profile.js';
import { type Privacy } from '../state/channel-settings.js';
import {
  checkNewChannel,
  createParams,
  DEFAULT_LIMITS,
  PRIVACY_CHOICES,
  privacyLabel,
  privacyChoicesFor,
  privacyOf,
  membersMatching,
  sortMembers,
  type ChannelLimits,
} from '../state/channel-forms.js';
import type { ChatState } from '../state/chat.js';
import { CHANNEL_NOTIFY, channelNotify, type ChannelNotifyKey } from '../state/notify.js';
import { PAGE_SIZE, pageOf } from '../state/users.js';
import { Avatar, CloseButton, FormError, Swatch } from './bits.js';
import { Options } from './compose.js';
import type { Controller } from './controller.js';
import { useFocusBack, useLastPageFocus, wrapTab } from './focus-back.js';
import { Icon } from './icons.js';
import { moveActive } from './listbox.js';
import { useLive } from './live.js';
import { track } from './track.js';

function limitsOf(s: ChatState): ChannelLimits {
  const n = (k: string, d: number) =>
    typeof s.realm.settings[k] === 'number' ? s.realm.settings[k] : d;
  return {
    maxName: n('max_stream_name_length', DEFAULT_LIMITS.maxName),
    maxDescription: n('max_stream_description_length', DEFAULT_LIMITS.maxDescription),
  };
}

/**
 * People to pick (the compose box's people autocomplete): the chosen ones as pills with a
 * remove button, then a field whose suggestions Enter, Tab or a click take.
 */
export function PersonPicker({
  c,
  id,
  label,
  chosen,
  exclude,
  onChange,
}: {
  c: Controller;
  id: string;
  label: string;
  chosen: readonly number[];
  /** People not to offer (already members). */
  exclude?: ReadonlySet<number>;
  onChange: (ids: number[]) => void;
}) {
  const s = c.state.value!;
  track(s.rev.users);
  const [q, setQ, qNow] = useLive('');
  const [active, setActive, activeNow] = useLive(0);
  const chosenNow = useRef(chosen);
  chosenNow.current = chosen;
  const itemsFor = (query: string) =>
    query.trim() === ''
      ? []
      : mentionCandidates(
          query,
          {
            users: [...s.users.values()].filter(
              (u) =>
                u.is_active !== false &&
                !isSystemBot(u) &&
                !chosenNow.current.includes(u.user_id) &&
                !exclude?.has(u.user_id),
            ),
            groups: [],
          },
          true,
        ).filter((x) => x.kind === 'user');
  const items = itemsFor(q);
  const listId = `${id}-options`;
  // The list as it is now (a second pick before the next drawing keeps the first).
  const change = (ids: number[]) => {
    chosenNow.current = ids;
    onChange(ids);
  };
  const add = (userId: number) => {
    change([...chosenNow.current, userId]);
    setQ('');
    setActive(0);
  };
  return (
    <div class="pills people-picker">
      {chosen.map((uid) => (
        <span class="pill" key={uid}>
          {s.userName(uid)}
          {uid === s.selfId ? ' (you)' : ''}
          <button
            type="button"
            aria-label={`Remove ${s.userName(uid)}`}
            onClick={() => change(chosenNow.current.filter((x) => x !== uid))}
          >
            ×
          </button>
        </span>
      ))}
      <input
        id={id}
        aria-label={label}
        role="combobox"
        aria-expanded={items.length > 0}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={
          items.length ? `${listId}-${Math.min(active, items.length - 1)}` : undefined
        }
        autocomplete="off"
        placeholder="Type a name"
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          const items = itemsFor(qNow.current);
          if (moveActive(e, items.length, setActive)) return;
          if ((e.key === 'Enter' || e.key === 'Tab') && items.length) {
            e.preventDefault();
            add(items[Math.min(activeNow.current, items.length - 1)]!.userId!);
          } else if (e.key === 'Enter') {
            // Not the form's submit: a name is being typed.
            if (qNow.current.trim() !== '') e.preventDefault();
          } else if (e.key === 'Backspace' && qNow.current === '' && chosenNow.current.length) {
            change(chosenNow.current.slice(0, -1));
          } else if (e.key === 'Escape' && qNow.current !== '') {
            // Closes the suggestions, not the dialog.
            e.stopPropagation();
            e.preventDefault();
            setQ('');
          }
        }}
      />
      <Options
        id={listId}
        label="People"
        below
        items={items}
        active={Math.min(active, items.length - 1)}
        onPick={(u) => add(u.userId!)}
      />
    </div>
  );
}

/**
 * A channel's members, sorted by name: a filter (as the people list's), and a page of those
 * matching at a time ("Show 100 more", as the people list and the Users panel), so that a channel
 * of thousands opens at once and is never drawn whole.
 */
function MemberList({
  s,
  members,
  render,
}: {
  s: ChatState;
  members: ReadonlySet<number>;
  render: (uid: number) => JSX.Element;
}) {
  const [filter, setFilter] = useState('');
  const [shown, setShown] = useState(PAGE_SIZE);
  const list = useRef<HTMLUListElement>(null);
  const field = useRef<HTMLInputElement>(null);
  // Sorted again only when the members or the people change (not at each keystroke).
  const sorted = useMemo(
    () => sortMembers(members, s.users),
    [members, s.members.rev.value, s.rev.users.value],
  );
  const matching = membersMatching(sorted, s.users, filter);
  const { rows, more } = pageOf(matching, shown);
  // The last page drawn: the focus goes on to the first row it added (its Remove button), or
  // back to the filter when the rows have nothing to focus.
  const markPage = useLastPageFocus(
    more !== null,
    (at) => list.current?.children[at]?.querySelector<HTMLElement>('button') ?? field.current,
  );
  const filterBy = (text: string) => {
    setFilter(text);
    setShown(PAGE_SIZE);
  };
  return (
    <>
      <input
        ref={field}
        class="field member-filter"
        type="search"
        aria-label="Filter members"
        placeholder="Filter members"
        value={filter}
        onInput={(e) => filterBy(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && e.currentTarget.value !== '') {
            // Empties the filter, not the dialog.
            e.stopPropagation();
            e.preventDefault();
            filterBy('');
          }
        }}
      />
      {matching.length === 0 ? (
        <p class="muted-text">No member matches.</p>
      ) : (
        <ul ref={list} class="member-list" aria-labelledby="channel-members-title">
          {rows.map(render)}
        </ul>
      )}
      {more && (
        <button
          class="btn small member-more"
          type="button"
          onClick={() => {
            markPage(rows.length);
            setShown(rows.length + PAGE_SIZE);
          }}
        >
          {more}
        </button>
      )}
    </>
  );
}

/** "Create channel": name, description, privacy and the people in it (the user among them). */
/**
 * A channel's name and description fields, as the Create dialog and the settings' edit have them
 * (a user group's too, in the groups settings: `what` "group").
 */
export function NameAndDescription(p: {
  what?: 'channel' | 'group';
  nameRef: RefObject<HTMLInputElement | null>;
  limits: ChannelLimits;
  name: string;
  setName: (v: string) => void;
  description: string;
  setDescription: (v: string) => void;
  rows: number;
  placeholder?: string;
}) {
  const what = p.what ?? 'channel';
  return (
    <>
      <label class="stack">
        {what === 'group' ? 'Group name' : 'Channel name'}
        <input
          ref={p.nameRef}
          class="field"
          name={`${what}-name`}
          autocomplete="off"
          maxLength={p.limits.maxName}
          value={p.name}
          onInput={(e) => p.setName(e.currentTarget.value)}
        />
      </label>
      <label class="stack">
        Description
        <textarea
          class="field"
          name={`${what}-description`}
          rows={p.rows}
          maxLength={p.limits.maxDescription}
          placeholder={p.placeholder}
          value={p.description}
          onInput={(e) => p.setDescription(e.currentTarget.value)}
        />
      </label>
    </>
  );
}

export function CreateChannel({ c, name: initial }: { c: Controller; name: string }) {
  const s = c.state.value!;
  const box = useRef<HTMLDivElement>(null);
  const nameField = useRef<HTMLInputElement>(null);
  useFocusBack(box, () => nameField.current);
  // What the submit sends is what was typed until now, not the last drawing (Enter right after
  // typing: useLive).
  const [name, setName, nameNow] = useLive(initial);
  const [description, setDescription, descriptionNow] = useLive('');
  // The kinds the user may not create are shown, not offered (the realm's settings).
  const allowed = s.creatableChannels();
  const [privacy, setPrivacy, privacyNow] = useLive<Privacy>(allowed[0] ?? 'public');
  const [members, setMembers, membersNow] = useLive<number[]>([s.selfId]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy, busyNow] = useLive(false);
  const limits = limitsOf(s);
  const close = () => (c.dialog.value = null);
  // The form's failure in view (it is below the fields, the dialog may be scrolled).
  useEffect(() => {
    if (error) box.current?.querySelector('[role="alert"]')?.scrollIntoView({ block: 'nearest' });
  }, [error]);
  const submit = async () => {
    const form = {
      name: nameNow.current,
      description: descriptionNow.current,
      privacy: privacyNow.current,
      members: membersNow.current,
    };
    const wrong = checkNewChannel(form, (n) => s.channelByName(n) !== undefined, limits);
    setError(wrong);
    if (wrong) return;
    setBusy(true);
    const failed = await c.createChannel(createParams(form));
    setBusy(false);
    if (failed) setError(failed);
  };
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={box}
        class="dialog channel-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="create-channel-title"
        onKeyDown={(e) => wrapTab(box.current, e)}
      >
        <header>
          <h2 id="create-channel-title">Create channel</h2>
          <CloseButton onClick={close} />
        </header>
        <form
          class="body"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            if (!busyNow.current) void submit();
          }}
        >
          <NameAndDescription
            nameRef={nameField}
            limits={limits}
            name={name}
            setName={setName}
            description={description}
            setDescription={setDescription}
            rows={2}
            placeholder="What is it about? (optional)"
          />
          <fieldset class="privacy">
            <legend>Who can access the channel</legend>
            {PRIVACY_CHOICES.map((p) => (
              <label class="radio" key={p.value}>
                <input
                  type="radio"
                  name="privacy"
                  value={p.value}
                  checked={privacy === p.value}
                  disabled={!allowed.includes(p.value)}
                  onChange={() => setPrivacy(p.value)}
                  aria-describedby={`privacy-${p.value}`}
                />
                <span>
                  <span class="radio-label">{p.label}</span>
                  <span class="muted-text" id={`privacy-${p.value}`}>
                    {p.help}
                    {!allowed.includes(p.value) &&
                      ' Your organization does not let you create such channels.'}
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
          <div class="stack-field">
            <label for="create-channel-people">People to subscribe</label>
            <PersonPicker
              c={c}
              id="create-channel-people"
              label="Add a person to subscribe"
              chosen={members}
              onChange={setMembers}
            />
          </div>
          <FormError error={error} />
          <div class="confirm-actions">
            <button class="btn" type="button" onClick={close}>
              Cancel
            </button>
            <button class="btn primary" type="submit" disabled={busy}>
              {busy ? 'Creating…' : 'Create'}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

/**
 * A channel's settings: general (name, description, privacy), the user's own (colour, pinned,
 * muted, notifications; for a channel they are in), members, Leave.
 */
export function ChannelSettings({ c, streamId }: { c: Controller; streamId: number }) {
  const s = c.state.value!;
  track(s.rev.channels, s.rev.users, s.members.rev, s.rev.settings);
  const box = useRef<HTMLDivElement>(null);
  const closeBtn = useRef<HTMLButtonElement>(null);
  useFocusBack(box, () => closeBtn.current);
  const ch = s.channels.get(streamId);
  const close = () => (c.dialog.value = null);
  useEffect(() => void c.loadMembers(streamId), [streamId]);
  // The channel gone from what the user may see (removed from a private one, archived): closed.
  useEffect(() => {
    if (!ch) {
      close();
      c.toast('This channel is no longer available.', 'info');
    }
  }, [!ch]);
  const [error, setError] = useState<string | null>(null);
  // The person whose Remove had the focus: once their row goes (the event), the focus would fall
  // to the page; it goes to the people field (or the close button) instead, still in the dialog.
  const removing = useRef<number | null>(null);
  const members = s.members.get(streamId);
  useLayoutEffect(() => {
    const gone = removing.current;
    if (gone === null || members?.has(gone)) return;
    removing.current = null;
    const now = document.activeElement;
    if (now && now !== document.body && now.isConnected) return;
    (box.current?.querySelector<HTMLElement>('#channel-add-people') ?? closeBtn.current)?.focus();
  }, [members, members?.size]);
  // A refusal in view (it is above the members, the dialog may be scrolled).
  useEffect(() => {
    if (error) box.current?.querySelector('[role="alert"]')?.scrollIntoView({ block: 'nearest' });
  }, [error]);
  if (!ch) return null;
  const perms = s.channelPermissions(streamId);
  const subscribed = s.subs.has(streamId);
  const color = s.subs.get(streamId)?.color ?? '#9aa0ad';
  const report = (failed: string | null) => setError(failed);
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={box}
        class="dialog channel-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="channel-settings-title"
        onKeyDown={(e) => wrapTab(box.current, e)}
      >
        <header>
          <h2 id="channel-settings-title">
            <Swatch color={color} privateChannel={ch.invite_only} />
            <span class="sr-only">Settings of #</span>
            <span>{ch.name}</span>
          </h2>
          <CloseButton buttonRef={closeBtn} label="Close channel settings" onClick={close} />
        </header>
        <div class="body">
          <FormError error={error} />
          <General c={c} s={s} streamId={streamId} may={perms.administer} onError={report} />
          <PrivacyFacts c={c} s={s} streamId={streamId} may={perms.administer} onError={report} />
          {subscribed && <Personal c={c} s={s} streamId={streamId} onError={report} />}
          <section class="members" aria-labelledby="channel-members-title">
            <h3 id="channel-members-title">Members{members ? ` (${members.size})` : ''}</h3>
            {perms.addMembers ? (
              <AddPeople
                c={c}
                id="channel-add-people"
                label="Add people to the channel"
                members={members}
                add={(ids) => c.addMembers(streamId, ids)}
                onError={report}
              />
            ) : (
              <p class="muted-text">
                {ch.invite_only && !subscribed
                  ? 'Only its members can add people to this private channel.'
                  : 'You may not add people to this channel.'}
              </p>
            )}
            {members ? (
              <MemberList
                s={s}
                members={members}
                render={(uid) => {
                  const me = uid === s.selfId;
                  const name = s.userName(uid);
                  return (
                    <li key={uid}>
                      <Avatar small id={uid} name={name} url={s.users.get(uid)?.avatar_url} />
                      <span class="member-name">
                        {name}
                        {me && <span class="muted-text"> (you)</span>}
                      </span>
                      {!me && perms.removeMembers && (
                        <button
                          class="btn small"
                          type="button"
                          aria-label={`Remove ${name}`}
                          onClick={() => {
                            setError(null);
                            removing.current = uid;
                            void c.removeMember(streamId, uid).then(report);
                          }}
                        >
                          Remove
                        </button>
                      )}
                    </li>
                  );
                }}
              />
            ) : (
              <p class="muted-text" role="status">
                Loading members…
              </p>
            )}
          </section>
          <div class="confirm-actions">
            {subscribed ? (
              <button
                class="btn danger"
                type="button"
                onClick={() => void c.leaveChannel(streamId)}
              >
                Leave channel
              </button>
            ) : (
              !ch.invite_only && (
                <button class="btn" type="button" onClick={() => void c.joinChannel(ch.name)}>
                  Join channel
                </button>
              )
            )}
            <button class="btn" type="button" onClick={close}>
              Close
            </button>
          </div>
        </div>
      </div>
    </div>
  );
}

/** The name and description: shown, or edited (Edit, for those who may administer it). */
function General({
  c,
  s,
  streamId,
  may,
  onError,
}: {
  c: Controller;
  s: ChatState;
  streamId: number;
  may: boolean;
  onError: (e: string | null) => void;
}) {
  const ch = s.channels.get(streamId)!;
  return (
    <EditNameAndDescription
      name={ch.name}
      description={ch.description}
      may={may}
      limits={limitsOf(s)}
      onError={onError}
      check={(name) => (name === '' ? 'Choose a name for the channel.' : null)}
      save={(p) =>
        c.updateChannel(streamId, {
          ...(p.name !== undefined ? { new_name: p.name } : {}),
          ...(p.description !== undefined ? { description: p.description } : {}),
        })
      }
    >
      {ch.description.trim() === '' ? (
        <p class="channel-description muted-text">No description.</p>
      ) : ch.rendered_description !== undefined ? (
        // The server's rendering of its Markdown (as a message's content).
        <div
          class="channel-description content"
          dangerouslySetInnerHTML={{ __html: ch.rendered_description }}
        />
      ) : (
        <p class="channel-description">{ch.description}</p>
      )}
    </EditNameAndDescription>
  );
}

/**
 * A name and description as shown (`children`), with "Edit name and description" for those who
 * may change them: the fields (NameAndDescription), Save and Cancel; only what changed is sent
 * (trimmed), `check` tells what is wrong with a new name first, `save` answers null or the
 * server's refusal. The focus goes to the name as the edit opens, back to Edit as it closes. A
 * channel's (its settings) and a user group's (the groups settings).
 */
export function EditNameAndDescription(p: {
  what?: 'channel' | 'group';
  name: string;
  description: string;
  may: boolean;
  limits: ChannelLimits;
  onError: (e: string | null) => void;
  check: (name: string) => string | null;
  save: (changes: { name?: string; description?: string }) => Promise<string | null>;
  children: ComponentChildren;
}) {
  const [editing, setEditing] = useState(false);
  const [name, setName, nameNow] = useLive(p.name);
  const [description, setDescription, descriptionNow] = useLive(p.description);
  const [busy, setBusy, busyNow] = useLive(false);
  const first = useRef<HTMLInputElement>(null);
  const editBtn = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useLayoutEffect(() => {
    if (editing) first.current?.focus();
    else if (refocus.current) editBtn.current?.focus();
    refocus.current = false;
  }, [editing]);
  const stop = () => {
    refocus.current = true;
    setEditing(false);
  };
  if (!editing || !p.may)
    return (
      <div class="channel-general">
        {p.children}
        {p.may && (
          <button
            ref={editBtn}
            class="btn small"
            type="button"
            onClick={() => {
              setName(p.name);
              setDescription(p.description);
              p.onError(null);
              setEditing(true);
            }}
          >
            <Icon name="edit" /> Edit name and description
          </button>
        )}
      </div>
    );
  return (
    <form
      class="channel-general editing"
      onSubmit={(e) => {
        e.preventDefault();
        if (busyNow.current) return;
        const changes: { name?: string; description?: string } = {};
        const newName = nameNow.current.trim();
        const newDescription = descriptionNow.current.trim();
        if (newName !== p.name) {
          const wrong = p.check(newName);
          if (wrong) return p.onError(wrong);
          changes.name = newName;
        }
        if (newDescription !== p.description) changes.description = newDescription;
        if (changes.name === undefined && changes.description === undefined) return stop();
        setBusy(true);
        void p.save(changes).then((failed) => {
          setBusy(false);
          p.onError(failed);
          if (!failed) stop();
        });
      }}
    >
      <NameAndDescription
        what={p.what}
        nameRef={first}
        limits={p.limits}
        name={name}
        setName={setName}
        description={description}
        setDescription={setDescription}
        rows={3}
      />
      <div class="choice-row">
        <button class="btn primary" type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
        <button class="btn" type="button" onClick={stop}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * The people picker and Add: a channel's settings (its members) and a user group's (the groups
 * settings). `add` answers null or the server's refusal (shown by `onError`).
 */
export function AddPeople({
  c,
  id,
  label,
  members,
  add,
  onError,
}: {
  c: Controller;
  id: string;
  label: string;
  members: ReadonlySet<number> | undefined;
  add: (ids: number[]) => Promise<string | null>;
  onError: (e: string | null) => void;
}) {
  const [chosen, setChosen, chosenNow] = useLive<number[]>([]);
  const [busy, setBusy, busyNow] = useLive(false);
  // Someone chosen who joined meanwhile (another's doing) is no longer to add.
  const toAdd = chosen.filter((id) => !members?.has(id));
  return (
    <form
      class="add-members"
      onSubmit={(e) => {
        e.preventDefault();
        const adding = chosenNow.current.filter((id) => !members?.has(id));
        if (busyNow.current || adding.length === 0) return;
        setBusy(true);
        onError(null);
        void add(adding).then((failed) => {
          setBusy(false);
          onError(failed);
          if (!failed) setChosen([]);
        });
      }}
    >
      <PersonPicker
        c={c}
        id={id}
        label={label}
        chosen={toAdd}
        exclude={members}
        onChange={setChosen}
      />
      <button class="btn primary" type="submit" disabled={busy || toAdd.length === 0}>
        Add
      </button>
    </form>
  );
}

/** The colours offered for a channel (any other by the colour field). */
const COLOURS: readonly [string, string][] = [
  ['#76ce90', 'Green'],
  ['#2e9e6a', 'Teal'],
  ['#a6c7e5', 'Sky'],
  ['#4f8fe6', 'Blue'],
  ['#b0a5fd', 'Lavender'],
  ['#c97fd1', 'Orchid'],
  ['#e4523d', 'Red'],
  ['#f4a259', 'Orange'],
  ['#f5ce6e', 'Yellow'],
  ['#a47462', 'Brown'],
];

const onOff = (on: boolean) => (on ? 'on' : 'off');

/**
 * The user's own settings of a channel they are in (the reference's "Personal" tab): its colour,
 * pinned to the top of the sidebar, muted, and its notifications, each either the user's own
 * setting (Settings → Notifications) or set for this channel, with a way back to the former.
 * Each change is sent as made; what is shown comes from the server's event (other tabs alike).
 */
function Personal({
  c,
  s,
  streamId,
  onError,
}: {
  c: Controller;
  s: ChatState;
  streamId: number;
  onError: (e: string | null) => void;
}) {
  const sub = s.subs.get(streamId)!;
  // A refused change: drawn again from the state (the control shows what is so, not what was tried).
  const [, redraw] = useState(0);
  const set = (property: string, value: boolean | string) => {
    onError(null);
    void c.setSubscriptionProperty(streamId, property, value).then((failed) => {
      if (!failed) return;
      onError(failed);
      redraw((n) => n + 1);
    });
  };
  const colour = sub.color.toLowerCase();
  return (
    <section class="personal" aria-labelledby="channel-personal-title">
      <h3 id="channel-personal-title">Personal settings</h3>
      <p class="muted-text">Only you see these, and only for this channel.</p>
      <fieldset>
        <legend>Channel colour</legend>
        <div class="colour-choices">
          {COLOURS.map(([hex, name]) => (
            <button
              key={hex}
              class="colour-choice"
              type="button"
              style={{ background: hex }}
              title={name}
              aria-label={name}
              aria-pressed={colour === hex}
              onClick={() => colour !== hex && set('color', hex)}
            />
          ))}
          <label class="colour-other">
            <input
              type="color"
              value={colour}
              onChange={(e) => {
                const hex = e.currentTarget.value.toLowerCase();
                if (hex !== colour) set('color', hex);
              }}
            />
            Other colour
          </label>
        </div>
      </fieldset>
      <label class="check">
        <input
          type="checkbox"
          name="pin_to_top"
          checked={sub.pin_to_top}
          onChange={(e) => set('pin_to_top', e.currentTarget.checked)}
        />
        <span>
          Pin to the top of the sidebar
          <div class="muted-text">Pinned channels come first, in a group of their own.</div>
        </span>
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="is_muted"
          checked={sub.is_muted}
          onChange={(e) => set('is_muted', e.currentTarget.checked)}
        />
        <span>
          Mute the channel
          <div class="muted-text">Its messages stay out of All messages and the unread counts.</div>
        </span>
      </label>
      <fieldset class="channel-notify">
        <legend>Notifications</legend>
        {sub.is_muted && (
          <p class="muted-text">The channel is muted: these apply only to topics you unmuted.</p>
        )}
        {CHANNEL_NOTIFY.map((n) => (
          <NotifyRow key={n.key} s={s} streamId={streamId} k={n.key} label={n.label} set={set} />
        ))}
      </fieldset>
    </section>
  );
}

/** One of a channel's notification settings: what applies, whose it is, back to the default. */
function NotifyRow({
  s,
  streamId,
  k,
  label,
  set,
}: {
  s: ChatState;
  streamId: number;
  k: ChannelNotifyKey;
  label: string;
  set: (property: string, value: boolean) => void;
}) {
  const v = channelNotify(s.subs.get(streamId), s.settings, k);
  const hint = `notify-hint-${k}`;
  return (
    <div class="notify-row" data-setting={k}>
      <label class="check">
        <input
          type="checkbox"
          name={k}
          checked={v.on}
          aria-describedby={hint}
          onChange={(e) => set(k, e.currentTarget.checked)}
        />
        <span>
          {label}
          <div id={hint} class="muted-text">
            {v.own
              ? `Set for this channel (your default: ${onOff(v.byDefault)})`
              : `Your default (${onOff(v.byDefault)})`}
          </div>
        </span>
      </label>
      {v.own && (
        <button
          class="btn small"
          type="button"
          aria-label={`${label}: use my default`}
          onClick={() => set(k, v.byDefault)}
        >
          Use my default
        </button>
      )}
    </div>
  );
}

/**
 * Who can access the channel: said, and changed by those who may administer it (to the kinds
 * they may create), after a confirmation of what it does.
 */
function PrivacyFacts({
  c,
  s,
  streamId,
  may,
  onError,
}: {
  c: Controller;
  s: ChatState;
  streamId: number;
  may: boolean;
  onError: (e: string | null) => void;
}) {
  const ch = s.channels.get(streamId)!;
  const privacy = privacyOf(ch);
  const [editing, setEditing] = useState(false);
  const [chosen, setChosen, chosenNow] = useLive<Privacy>(privacy);
  const [busy, setBusy, busyNow] = useLive(false);
  const changeBtn = useRef<HTMLButtonElement>(null);
  const help = PRIVACY_CHOICES.find((p) => p.value === privacy)?.help;
  // Web-public is not offered here (nor in Create channel): such a channel is left as it is.
  const changeable = may && privacy !== 'web-public';
  const choices = privacyChoicesFor(privacy, s.creatableChannels());
  const stop = () => {
    setEditing(false);
    requestAnimationFrame(() => changeBtn.current?.focus());
  };
  if (!editing)
    return (
      <dl class="channel-facts">
        <dt>Who can access the channel</dt>
        <dd>
          {ch.invite_only && <Icon name="lock" />} {privacyLabel(privacy)}
          {help && <span class="muted-text"> — {help}</span>}
        </dd>
        {changeable && choices.length > 1 && (
          <dd>
            <button
              ref={changeBtn}
              class="btn small"
              type="button"
              onClick={() => {
                setChosen(privacy);
                onError(null);
                setEditing(true);
              }}
            >
              <Icon name="lock" /> Change privacy
            </button>
          </dd>
        )}
      </dl>
    );
  return (
    <form
      class="channel-privacy"
      onSubmit={(e) => {
        e.preventDefault();
        if (busyNow.current) return;
        const to = chosenNow.current;
        if (to === privacyOf(s.channels.get(streamId) ?? ch)) return stop();
        setBusy(true);
        void c.changePrivacy(streamId, to).then(({ done, error }) => {
          setBusy(false);
          onError(error);
          if (done) stop();
        });
      }}
    >
      <fieldset class="privacy">
        <legend>Who can access the channel</legend>
        {PRIVACY_CHOICES.filter((p) => choices.includes(p.value)).map((p) => (
          <label class="radio" key={p.value}>
            <input
              type="radio"
              name="channel-privacy"
              value={p.value}
              checked={chosen === p.value}
              onChange={() => setChosen(p.value)}
              aria-describedby={`change-privacy-${p.value}`}
            />
            <span>
              <span class="radio-label">
                {p.label}
                {p.value === privacy && <span class="muted-text"> (now)</span>}
              </span>
              <span class="muted-text" id={`change-privacy-${p.value}`}>
                {p.help}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <div class="choice-row">
        <button class="btn primary" type="submit" disabled={busy || chosen === privacy}>
          {busy ? 'Saving…' : 'Save privacy'}
        </button>
        <button class="btn" type="button" onClick={stop}>
          Cancel
        </button>
      </div>
    </form>
  );
}
