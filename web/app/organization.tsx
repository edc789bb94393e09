/**
 * Two settings panels (web/state/organization.ts holds their state): **Organization** — the
 * organization's name and description, and the permissions a team sets in its first week, which
 * administrators change (owners the owner-only ones) and everyone else reads — and **Custom
 * emoji** — the organization's emoji with their authors, added by those the organization allows,
 * deleted by their author or an administrator. Both follow the realm events: another
 * administrator's change shows at once. Registered with `addSettingsPanel`; settings-panels.ts
 * imports this module.
 */
import { useMemo, useRef } from 'preact/hooks';
import type { Controller } from './controller.js';
import { addSettingsPanel } from './settings.js';
import { FormError } from './bits.js';
import { Outcome, RowAction, useAction } from './row-action.js';
import { track } from './track.js';
import { requestOf, useChanges, useLive } from './live.js';
import {
  customEmojiRows,
  describeGroupSetting,
  EMAIL_VISIBILITY,
  editLimitChoices,
  emojiName,
  LANGUAGE_CHOICES,
  mayChange,
  newEmojiProblem,
  orgValues,
  OrgDraft,
  PERMISSION_SECTIONS,
  ROLE_GROUP_LABELS,
  systemGroupOf,
  type Permission,
} from '../state/organization.js';
import { Role } from '../../src/lib/roles.js';
import type { GroupSetting } from '../state/groups.js';
import {
  MAX_REALM_DESCRIPTION_LENGTH,
  MAX_REALM_NAME_LENGTH,
} from '../../src/lib/realm-settings.js';

const roleOf = (c: Controller) => c.state.value?.self.role ?? Role.MEMBER;

/**
 * A form's draft over the realm's settings as the events keep them. Each component drawing
 * from the realm's settings tracks them itself: a component with signals or hooks is not drawn
 * again with its parent when its props are the same (@preact/signals).
 */
function useDraft(c: Controller): OrgDraft {
  const s = c.state.value!;
  track(s.rev.settings, s.rev.users);
  const draft = useMemo(
    () =>
      new OrgDraft(
        () => orgValues(s.realm.settings),
        () => s.groups,
      ),
    [s],
  );
  useChanges(draft);
  return draft;
}

/** Save and Discard while there are edits, and what the last save did. */
function SaveBar({ draft }: { draft: OrgDraft }) {
  const dirty = draft.dirty.length > 0;
  return (
    <>
      {dirty && (
        <div class="org-save">
          <button class="btn primary" type="submit" disabled={draft.busy}>
            Save changes
          </button>
          <button class="btn" type="button" disabled={draft.busy} onClick={() => draft.discard()}>
            Discard
          </button>
        </div>
      )}
      <FormError error={draft.error} />
      {draft.saved && (
        <p class="muted-text" role="status">
          {draft.saved}
        </p>
      )}
    </>
  );
}

function submitter(c: Controller, draft: OrgDraft) {
  return (e: Event) => {
    e.preventDefault();
    void draft.save(requestOf(c));
  };
}

function Profile({ c }: { c: Controller }) {
  const draft = useDraft(c);
  const editable = mayChange('name', roleOf(c));
  return (
    <form class="org-form" aria-labelledby="org-profile-title" onSubmit={submitter(c, draft)}>
      <h4 id="org-profile-title">Profile</h4>
      <label class="stack">
        Organization name
        <input
          class="field"
          type="text"
          maxLength={MAX_REALM_NAME_LENGTH}
          readOnly={!editable}
          value={draft.value('name') as string}
          onInput={(e) => draft.set('name', e.currentTarget.value)}
        />
      </label>
      <label class="stack">
        Description
        <textarea
          class="field"
          rows={3}
          maxLength={MAX_REALM_DESCRIPTION_LENGTH}
          readOnly={!editable}
          value={draft.value('description') as string}
          onInput={(e) => draft.set('description', e.currentTarget.value)}
        />
      </label>
      <SaveBar draft={draft} />
    </form>
  );
}

/** One permission: its system-group choices, or the composed value it has, read-only. */
function PermissionField({ c, draft, p }: { c: Controller; draft: OrgDraft; p: Permission }) {
  const s = c.state.value!;
  track(s.rev.settings, s.rev.users);
  useChanges(draft);
  const value = draft.value(p.key) as GroupSetting | undefined;
  const system = systemGroupOf(value, s.groups);
  const editable = mayChange(p.key, roleOf(c));
  const id = `org-${p.key}`;
  return (
    <div class="org-field">
      <label for={id}>{p.label}</label>
      {system === null ? (
        <output id={id} class="org-composed">
          {describeGroupSetting(value, s.groups, (u) => s.userName(u))}
        </output>
      ) : (
        <select
          id={id}
          class="field"
          disabled={!editable}
          value={system}
          onChange={(e) =>
            draft.setGroup(p.key, e.currentTarget.value as keyof typeof ROLE_GROUP_LABELS)
          }
        >
          {p.choices.map((g) => (
            <option key={g} value={g}>
              {ROLE_GROUP_LABELS[g]}
            </option>
          ))}
          {!p.choices.includes(system) && (
            <option value={system}>{ROLE_GROUP_LABELS[system]}</option>
          )}
        </select>
      )}
      {system === null && (
        <span class="muted-text">Not one role: this panel shows it, without changing it.</span>
      )}
      {p.ownerOnly && roleOf(c) === Role.ADMINISTRATOR && (
        <span class="muted-text">Only owners can change this.</span>
      )}
    </div>
  );
}

function Permissions({ c }: { c: Controller }) {
  const draft = useDraft(c);
  const role = roleOf(c);
  const admin = mayChange('default_language', role);
  const limit = draft.value('message_content_edit_limit_seconds') as number | null;
  const editing = draft.value('allow_message_editing') as boolean;
  return (
    <form class="org-form" aria-labelledby="org-permissions-title" onSubmit={submitter(c, draft)}>
      <h4 id="org-permissions-title">Permissions</h4>
      {PERMISSION_SECTIONS.map((section) => (
        <fieldset key={section.title} class="org-section">
          <legend>{section.title}</legend>
          {section.settings.map((p) => (
            <PermissionField key={p.key} c={c} draft={draft} p={p} />
          ))}
          {section.title === 'Messages' && (
            <>
              <label class="check">
                <input
                  type="checkbox"
                  disabled={!admin}
                  checked={editing}
                  onChange={(e) => draft.set('allow_message_editing', e.currentTarget.checked)}
                />
                <span>Allow editing messages</span>
              </label>
              <div class="org-field">
                <label for="org-edit-limit">How long after sending a message can be edited</label>
                <select
                  id="org-edit-limit"
                  class="field"
                  disabled={!admin || !editing}
                  value={String(limit)}
                  onChange={(e) => {
                    const v = e.currentTarget.value;
                    draft.set(
                      'message_content_edit_limit_seconds',
                      v === 'null' ? null : Number(v),
                    );
                  }}
                >
                  {editLimitChoices(limit).map(([v, label]) => (
                    <option key={String(v)} value={String(v)}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
            </>
          )}
        </fieldset>
      ))}
      <fieldset class="org-section">
        <legend>People and language</legend>
        <div class="org-field">
          <label for="org-email-visibility">Who can see new users’ e-mail addresses</label>
          <select
            id="org-email-visibility"
            class="field"
            disabled={!admin}
            value={String(draft.value('email_address_visibility'))}
            onChange={(e) => draft.set('email_address_visibility', Number(e.currentTarget.value))}
          >
            {EMAIL_VISIBILITY.map(([v, label]) => (
              <option key={v} value={String(v)}>
                {label}
              </option>
            ))}
          </select>
          <span class="muted-text">Each user can change who sees theirs.</span>
        </div>
        <div class="org-field">
          <label for="org-language">Language of the organization</label>
          <select
            id="org-language"
            class="field"
            disabled={!admin}
            value={draft.value('default_language') as string}
            onChange={(e) => draft.set('default_language', e.currentTarget.value)}
          >
            {LANGUAGE_CHOICES.map(([code, name]) => (
              <option key={code} value={code}>
                {name}
              </option>
            ))}
          </select>
        </div>
      </fieldset>
      <SaveBar draft={draft} />
    </form>
  );
}

/**
 * The organization's icon (the reference's "Organization profile picture"): administrators upload
 * one (the server makes a 100×100 square of it) or go back to the default; everyone else sees it.
 * It follows the realm's `icon` events, as the sidebar does.
 */
function RealmIcon({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings);
  const admin = roleOf(c) <= Role.ADMINISTRATOR;
  const uploaded = s.realm.iconSource === 'U';
  const fileInput = useRef<HTMLInputElement>(null);
  const act = useAction();

  const upload = async () => {
    const input = fileInput.current;
    const file = input?.files?.[0];
    if (!input || !file) return;
    await act.run(() => c.client.uploadRealmIcon(file, file.name), 'Uploaded the icon.');
    input.value = '';
  };

  return (
    <div class="org-form org-icon" role="group" aria-labelledby="org-icon-title">
      <h4 id="org-icon-title">Organization icon</h4>
      <div class="org-icon-row">
        {uploaded ? (
          <img class="org-icon-img" src={s.realm.iconUrl} alt="The organization's icon" />
        ) : (
          <span class="org-icon-img org-icon-default" role="img" aria-label="The default icon">
            {(s.realm.name[0] ?? 'C').toUpperCase()}
          </span>
        )}
        <div class="org-icon-side">
          <p class="muted-text">
            {uploaded
              ? 'Shown beside the organization’s name.'
              : 'No icon uploaded: the initial of the organization’s name is shown.'}
          </p>
          {admin && (
            <div class="org-icon-actions">
              <input
                ref={fileInput}
                class="sr-only"
                type="file"
                tabIndex={-1}
                aria-hidden="true"
                accept="image/png,image/gif,image/jpeg,image/webp"
                onChange={() => void upload()}
              />
              <button
                class="btn"
                type="button"
                disabled={act.busy}
                onClick={() => fileInput.current?.click()}
              >
                Upload icon
              </button>
              {uploaded && (
                <button
                  class="btn danger"
                  type="button"
                  disabled={act.busy}
                  onClick={() =>
                    void act.run(
                      () => c.client.request('DELETE', '/realm/icon'),
                      'Deleted the icon.',
                    )
                  }
                >
                  Delete icon
                </button>
              )}
            </div>
          )}
          {admin && (
            <p class="muted-text">
              PNG, GIF, JPEG or WebP, at most 5 MB; a square image looks best.
            </p>
          )}
        </div>
      </div>
      <Outcome error={act.error} done={act.done} />
    </div>
  );
}

function Organization({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings, s.rev.users);
  const role = roleOf(c);
  return (
    <>
      <p class="muted-text">
        {role <= Role.OWNER
          ? 'As an owner, you can change every setting here.'
          : role <= Role.ADMINISTRATOR
            ? 'As an administrator, you can change these settings, except those only owners may change.'
            : 'Only administrators can change these settings.'}
      </p>
      <RealmIcon c={c} />
      <Profile c={c} />
      <Permissions c={c} />
    </>
  );
}

function CustomEmoji({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings, s.rev.users);
  const rows = customEmojiRows(s.realm.emoji, { user_id: s.selfId, role: roleOf(c) });
  const canAdd = s.canAddCustomEmoji();
  const [name, setName, nameNow] = useLive('');
  const fileInput = useRef<HTMLInputElement>(null);
  const act = useAction();

  const add = async (e: Event) => {
    e.preventDefault();
    const file = fileInput.current?.files?.[0] ?? null;
    const problem = newEmojiProblem(nameNow.current, file);
    if (problem) return act.fail(problem);
    const named = emojiName(nameNow.current);
    const ok = await act.run(
      () => c.client.uploadEmoji(named, file!, file!.name),
      `Added :${named}:.`,
    );
    if (ok) {
      setName('');
      if (fileInput.current) fileInput.current.value = '';
    }
  };

  return (
    <>
      <p class="muted-text">
        Custom emoji are used like the others: in messages as <code>:name:</code>, in reactions and
        statuses, from the emoji picker.
      </p>
      {canAdd ? (
        <form class="org-emoji-form" aria-label="Add an emoji" onSubmit={(e) => void add(e)}>
          <div class="form-row">
            <label class="stack">
              Emoji name
              <input
                class="field"
                type="text"
                required
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
                placeholder="party_parrot"
              />
            </label>
            <label class="stack">
              Image (PNG, GIF, JPEG or WebP)
              <input
                ref={fileInput}
                class="field"
                type="file"
                required
                accept="image/png,image/gif,image/jpeg,image/webp"
              />
            </label>
          </div>
          <button class="btn primary" type="submit" disabled={act.busy}>
            Add emoji
          </button>
        </form>
      ) : (
        <p class="muted-text">
          You cannot add custom emoji: the organization’s administrators chose who can.
        </p>
      )}
      <Outcome error={act.error} done={act.done} />
      {rows.length === 0 ? (
        <p class="muted-text">This organization has no custom emoji yet.</p>
      ) : (
        <table class="org-emoji" aria-label="Custom emoji">
          <thead>
            <tr>
              <th>Emoji</th>
              <th>Name</th>
              <th>Added by</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.name}>
                <td>
                  <img class="org-emoji-img" src={r.url} alt={`:${r.name}:`} />
                </td>
                <td>
                  <code>:{r.name}:</code>
                </td>
                <td>
                  {r.authorId === null
                    ? 'Unknown'
                    : r.authorId === s.selfId
                      ? 'You'
                      : s.userName(r.authorId)}
                </td>
                <td>
                  {r.canDelete && (
                    <RowAction
                      label="Delete"
                      name={`Delete :${r.name}:`}
                      danger
                      confirm={{
                        c,
                        title: `Delete :${r.name}:?`,
                        text: 'No one can use it any more; messages and reactions that have it keep showing it.',
                      }}
                      act={act}
                      request={() =>
                        c.client.request('DELETE', `/realm/emoji/${encodeURIComponent(r.name)}`)
                      }
                      said={`Deleted :${r.name}:.`}
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

addSettingsPanel({
  id: 'organization',
  title: 'Organization',
  section: 'organization',
  order: 10,
  render: (c) => <Organization c={c} />,
});
addSettingsPanel({
  id: 'emoji',
  title: 'Custom emoji',
  section: 'organization',
  order: 50,
  render: (c) => <CustomEmoji c={c} />,
});
