/**
 * Custom profile fields in the settings (web/state/profile-fields.ts holds the logic), as the
 * reference's: **Profile** — a person's own values, each field with a fitting input (a list of
 * options, a date, a link, people with the people picker, an account's username), required ones
 * marked, saved together (PATCH /users/me/profile_data; an emptied field is cleared with DELETE,
 * the API's way), what the server refuses shown as it says it — and, for administrators,
 * **Custom profile fields** — the realm's fields in order, added, edited, deleted after a
 * confirmation, moved up and down (PATCH /realm/profile_fields). Both follow the events while
 * open (`custom_profile_fields`, a `realm_user` update of a value). Registered with
 * `addSettingsPanel`; settings-panels.ts imports this module.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { CustomProfileField } from '../../src/client/types.js';
import {
  changesOf,
  choicesOf,
  createParams,
  draftOf,
  draftProblem,
  emptyDraft,
  entriesOf,
  type Entry,
  type ExternalKinds,
  FIELD_TYPE_NAMES,
  FieldType,
  isDefaultExternal,
  KNOWN_EXTERNAL,
  MAX_SUMMARY_FIELDS,
  missingRequired,
  movedOrder,
  summaryAllowed,
  summaryFull,
  typeName,
  updateParams,
  type FieldDraft,
} from '../state/profile-fields.js';
import { FormError } from './bits.js';
import { PersonPicker } from './channel-dialogs.js';
import type { Controller } from './controller.js';
import { Icon } from './icons.js';
import { useLive } from './live.js';
import { RowAction, useAction } from './row-action.js';
import { addSettingsPanel, errorText } from './settings.js';
import { track } from './track.js';

const isAdmin = (c: Controller): boolean => c.state.value?.isAdmin === true;

/** The fields in the realm's order. */
function ordered(fields: readonly CustomProfileField[]): CustomProfileField[] {
  return [...fields].sort((a, b) => a.order - b.order);
}

const PRONOUN_SUGGESTIONS = ['he/him', 'she/her', 'they/them'];

// ---- a person's own values --------------------------------------------------------------------

function Profile({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users);
  const fields = ordered(s.profileFields);
  // What the person has now (kept live by the events), and what they changed in the form.
  // (The users' map has them from GET /users, self only what the events have changed since.)
  const saved = entriesOf(fields, s.users.get(s.selfId)?.profile_data ?? s.self.profile_data);
  const [edits, setEdits, editsNow] = useLive<ReadonlyMap<number, Entry>>(new Map());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const admin = isAdmin(c);
  const now = new Map(saved);
  for (const [id, v] of edits) now.set(id, v);
  const set = (id: number, v: Entry) => {
    setEdits((m) => new Map(m).set(id, v));
    setDone(false);
  };

  if (fields.length === 0) {
    return (
      <p class="muted-text">
        Your organization has no custom profile fields.
        {admin && ' Add some in Custom profile fields.'}
      </p>
    );
  }

  const submit = async (e: Event) => {
    e.preventDefault();
    const current = new Map(saved);
    for (const [id, v] of editsNow.current) current.set(id, v);
    const { update, remove } = changesOf(fields, saved, current);
    setError(null);
    setDone(false);
    if (update.length === 0 && remove.length === 0) {
      setEdits(new Map());
      setDone(true);
      return;
    }
    setBusy(true);
    try {
      if (update.length)
        await c.client.request('PATCH', '/users/me/profile_data', { data: update });
      if (remove.length)
        await c.client.request('DELETE', '/users/me/profile_data', { data: remove });
      setEdits(new Map());
      setDone(true);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const missing = missingRequired(fields, now);

  return (
    // The server checks each value (its messages say what is wrong), not the browser's own checks.
    <form
      class="pf-own"
      aria-label="Your profile fields"
      noValidate
      onSubmit={(e) => void submit(e)}
    >
      <p class="muted-text">
        What you fill in here is on your profile card for everyone in the organization.
      </p>
      {fields.map((f) => (
        <OwnField
          key={f.id}
          c={c}
          f={f}
          value={now.get(f.id) ?? ''}
          locked={f.editable_by_user === false && !admin}
          onChange={(v) => set(f.id, v)}
        />
      ))}
      {missing.length > 0 && (
        <p class="muted-text pf-missing">Required, not filled in yet: {missing.join(', ')}.</p>
      )}
      <FormError error={error} />
      <div class="pf-actions">
        <button class="btn primary" type="submit" disabled={busy}>
          Save changes
        </button>
        {edits.size > 0 && (
          <button
            class="btn"
            type="button"
            disabled={busy}
            onClick={() => {
              setEdits(new Map());
              setError(null);
            }}
          >
            Discard changes
          </button>
        )}
        {done && (
          <span class="muted-text" role="status">
            Saved.
          </span>
        )}
      </div>
    </form>
  );
}

function OwnField({
  c,
  f,
  value,
  locked,
  onChange,
}: {
  c: Controller;
  f: CustomProfileField;
  value: Entry;
  locked: boolean;
  onChange: (v: Entry) => void;
}) {
  const s = c.state.value!;
  const id = `pf-own-${f.id}`;
  const hintId = f.hint || locked ? `${id}-hint` : undefined;
  const text = typeof value === 'string' ? value : '';
  const common = {
    id,
    class: 'field',
    disabled: locked,
    'aria-describedby': hintId,
    'aria-required': f.required === true,
  };
  let input;
  switch (f.type) {
    case FieldType.LONG_TEXT:
      input = (
        <textarea
          {...common}
          rows={3}
          maxLength={500}
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      );
      break;
    case FieldType.SELECT:
      input = (
        <select {...common} value={text} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Not set</option>
          {choicesOf(f).map((o) => (
            <option key={o.id} value={o.id}>
              {o.text}
            </option>
          ))}
        </select>
      );
      break;
    case FieldType.DATE:
      input = (
        <input
          {...common}
          type="date"
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      );
      break;
    case FieldType.URL:
      input = (
        <input
          {...common}
          type="url"
          placeholder="https://"
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      );
      break;
    case FieldType.USER: {
      const bots = new Set([...s.users.values()].filter((u) => u.is_bot).map((u) => u.user_id));
      input = locked ? (
        <p class="muted-text">
          {(value as number[]).map((uid) => s.userName(uid)).join(', ') || 'Not set'}
        </p>
      ) : (
        <PersonPicker
          c={c}
          id={id}
          label={f.name}
          chosen={Array.isArray(value) ? value : []}
          exclude={bots}
          onChange={(ids) => onChange(ids)}
        />
      );
      break;
    }
    default:
      input = (
        <input
          {...common}
          type="text"
          maxLength={50}
          list={f.type === FieldType.PRONOUNS ? 'pf-pronouns' : undefined}
          placeholder={f.type === FieldType.EXTERNAL_ACCOUNT ? 'username' : undefined}
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      );
  }
  return (
    <div class="pf-own-field">
      <label class="pf-label" for={id}>
        {f.name}
        {f.required && (
          <span class="pf-required" title="Required">
            {' '}
            *<span class="sr-only"> (required)</span>
          </span>
        )}
      </label>
      {input}
      {f.type === FieldType.PRONOUNS && (
        <datalist id="pf-pronouns">
          {PRONOUN_SUGGESTIONS.map((p) => (
            <option key={p} value={p} />
          ))}
        </datalist>
      )}
      {hintId && (
        <p id={hintId} class="muted-text pf-hint">
          {f.hint}
          {locked && `${f.hint ? ' · ' : ''}Only administrators can change this field.`}
        </p>
      )}
    </div>
  );
}

// ---- the administrators' panel ---------------------------------------------------------------

function kindsOf(c: Controller): ExternalKinds {
  const k = c.state.value?.realm.settings.realm_default_external_accounts;
  return k && typeof k === 'object' ? (k as ExternalKinds) : KNOWN_EXTERNAL;
}

function ManageFields({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users);
  const fields = ordered(s.profileFields);
  const [editing, setEditing] = useState<number | null>(null);
  const [adding, setAdding] = useState(false);
  const act = useAction();
  const busy = act.busy;
  // After a move, the focus stays on the moved field's button (on the other one at an end), once
  // the list shows the order asked for (`order`).
  const moved = useRef<{ id: number; dir: 'up' | 'down'; order: string } | null>(null);
  const list = useRef<HTMLOListElement>(null);
  const orderKey = fields.map((f) => f.id).join(',');
  // As a form closes, the focus goes to what opened it (not to the page's body).
  const focusTo = useRef<string | null>(null);
  useLayoutEffect(() => {
    const sel = focusTo.current;
    const el = sel ? document.querySelector<HTMLElement>(sel) : null;
    if (el) {
      el.focus();
      focusTo.current = null;
    }
  });
  useLayoutEffect(() => {
    const m = moved.current;
    // The arrows are disabled while the request runs, and the event with the new order may come
    // before or after its answer: both first (a refusal leaves the order as it was).
    if (!m || !list.current || busy) return;
    if (!act.error && orderKey !== m.order) return;
    const pick = (dir: string) =>
      list.current?.querySelector<HTMLButtonElement>(`[data-move="${m.id}-${dir}"]`);
    const el = pick(m.dir);
    const to = el && !el.disabled ? el : pick(m.dir === 'up' ? 'down' : 'up');
    moved.current = null;
    to?.focus();
  }, [orderKey, busy, act.error]);

  const move = (f: CustomProfileField, dir: 'up' | 'down') => {
    const order = movedOrder(fields, f.id, dir === 'up' ? -1 : 1);
    moved.current = { id: f.id, dir, order: order.join(',') };
    void act.run(() => c.client.request('PATCH', '/realm/profile_fields', { order }));
  };

  return (
    <>
      <p class="muted-text">
        Fields everyone can fill in on their profile. Up to {MAX_SUMMARY_FIELDS} of them show on the
        profile card; every field a person filled in shows in their full profile.
      </p>
      <FormError error={act.error} />
      {fields.length === 0 ? (
        <p class="muted-text">No custom profile fields yet.</p>
      ) : (
        <ol ref={list} class="pf-list" aria-label="Custom profile fields">
          {fields.map((f, i) =>
            editing === f.id ? (
              <li key={f.id} class="pf-row editing">
                <FieldForm
                  c={c}
                  field={f}
                  fields={fields}
                  label={`Edit ${f.name}`}
                  submit="Save"
                  onDone={() => {
                    focusTo.current = `[data-edit="${f.id}"]`;
                    setEditing(null);
                  }}
                  send={(d) =>
                    c.client.request('PATCH', `/realm/profile_fields/${f.id}`, updateParams(f, d))
                  }
                />
              </li>
            ) : (
              <li key={f.id} class="pf-row">
                <div class="pf-info">
                  <strong>{f.name}</strong>
                  <span class="muted-text">
                    {typeName(f.type)}
                    {f.required ? ' · required' : ''}
                    {f.display_in_profile_summary ? ' · on the card' : ''}
                    {f.editable_by_user === false ? ' · set by administrators' : ''}
                  </span>
                  {f.hint && <span class="muted-text pf-hint">{f.hint}</span>}
                </div>
                <div class="pf-row-actions">
                  <button
                    class="icon-btn"
                    type="button"
                    data-move={`${f.id}-up`}
                    aria-label={`Move ${f.name} up`}
                    title="Move up"
                    disabled={busy || i === 0}
                    onClick={() => move(f, 'up')}
                  >
                    <span aria-hidden="true">↑</span>
                  </button>
                  <button
                    class="icon-btn"
                    type="button"
                    data-move={`${f.id}-down`}
                    aria-label={`Move ${f.name} down`}
                    title="Move down"
                    disabled={busy || i === fields.length - 1}
                    onClick={() => move(f, 'down')}
                  >
                    <span aria-hidden="true">↓</span>
                  </button>
                  <button
                    class="btn"
                    type="button"
                    aria-label={`Edit ${f.name}`}
                    data-edit={f.id}
                    disabled={busy}
                    onClick={() => setEditing(f.id)}
                  >
                    Edit
                  </button>
                  <RowAction
                    label="Delete"
                    name={`Delete ${f.name}`}
                    danger
                    confirm={{
                      c,
                      title: 'Delete this profile field?',
                      text: `“${f.name}” goes from every profile, with what everyone filled in for it. This cannot be undone.`,
                    }}
                    act={act}
                    request={() => c.client.request('DELETE', `/realm/profile_fields/${f.id}`)}
                  />
                </div>
              </li>
            ),
          )}
        </ol>
      )}
      {adding ? (
        <FieldForm
          c={c}
          fields={fields}
          label="Add a profile field"
          submit="Add field"
          onDone={() => {
            focusTo.current = '.pf-add';
            setAdding(false);
          }}
          send={(d) => c.client.request('POST', '/realm/profile_fields', createParams(d))}
        />
      ) : (
        <button class="btn pf-add" type="button" onClick={() => setAdding(true)}>
          <Icon name="plus" />
          Add a profile field
        </button>
      )}
    </>
  );
}

/** The form to add a field, or to edit one (`field`; its type stays). */
function FieldForm({
  c,
  field,
  fields,
  label,
  submit,
  send,
  onDone,
}: {
  c: Controller;
  field?: CustomProfileField;
  fields: readonly CustomProfileField[];
  label: string;
  submit: string;
  send: (d: FieldDraft) => Promise<unknown>;
  onDone: () => void;
}) {
  const [d, setD, dNow] = useLive<FieldDraft>(() => (field ? draftOf(field) : emptyDraft()));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLSelectElement & HTMLInputElement>(null);
  useLayoutEffect(() => first.current?.focus(), []);
  const put = (change: Partial<FieldDraft>) => setD((now) => ({ ...now, ...change }));
  const kinds = kindsOf(c);
  const full = summaryFull(fields, field?.id);
  const fixed = isDefaultExternal(d);

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    const problem = draftProblem(dNow.current);
    if (problem) return setError(problem);
    setBusy(true);
    setError(null);
    try {
      await send(dNow.current);
      onDone();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="pf-form"
      aria-label={label}
      onSubmit={(e) => void onSubmit(e)}
      onKeyDown={(e) => {
        // Esc leaves the form (not the settings).
        if (e.key === 'Escape') {
          e.stopPropagation();
          e.preventDefault();
          onDone();
        }
      }}
    >
      <h4 class="pf-form-title">{label}</h4>
      <div class="form-row">
        <label class="stack">
          Type
          <select
            ref={field ? undefined : first}
            class="field"
            value={String(d.type)}
            disabled={field !== undefined}
            onChange={(e) => put({ type: Number(e.currentTarget.value) })}
          >
            {FIELD_TYPE_NAMES.map(([t, name]) => (
              <option key={t} value={t}>
                {name}
              </option>
            ))}
          </select>
        </label>
        {d.type === FieldType.EXTERNAL_ACCOUNT && (
          <label class="stack">
            Account
            <select
              class="field"
              value={d.subtype}
              disabled={field !== undefined}
              onChange={(e) => put({ subtype: e.currentTarget.value })}
            >
              {Object.entries(kinds).map(([k, v]) => (
                <option key={k} value={k}>
                  {v.text ?? v.name ?? k}
                </option>
              ))}
              <option value="custom">Custom</option>
            </select>
          </label>
        )}
      </div>
      {fixed ? (
        <p class="muted-text">
          The name and hint of this account’s field are the organization’s defaults.
        </p>
      ) : (
        <div class="form-row">
          <label class="stack">
            Name
            <input
              ref={field ? first : undefined}
              class="field"
              type="text"
              required
              maxLength={40}
              value={d.name}
              onInput={(e) => put({ name: e.currentTarget.value })}
            />
          </label>
          <label class="stack">
            Hint
            <input
              class="field"
              type="text"
              maxLength={80}
              value={d.hint}
              onInput={(e) => put({ hint: e.currentTarget.value })}
            />
          </label>
        </div>
      )}
      {d.type === FieldType.EXTERNAL_ACCOUNT && d.subtype === 'custom' && (
        <label class="stack">
          URL pattern
          <input
            class="field"
            type="text"
            required
            placeholder="https://example.com/people/%(username)s"
            value={d.urlPattern}
            disabled={field !== undefined && isDefaultExternal(draftOf(field))}
            onInput={(e) => put({ urlPattern: e.currentTarget.value })}
          />
        </label>
      )}
      {d.type === FieldType.SELECT && (
        <fieldset class="pf-choices">
          <legend>Choices</legend>
          {d.choices.map((o, i) => (
            <div class="pf-choice" key={o.id ?? `new${i}`}>
              <input
                class="field"
                type="text"
                aria-label={`Choice ${i + 1}`}
                value={o.text}
                onInput={(e) => {
                  const text = e.currentTarget.value;
                  setD((now) => ({
                    ...now,
                    choices: now.choices.map((x, j) => (j === i ? { ...x, text } : x)),
                  }));
                }}
              />
              <button
                class="icon-btn"
                type="button"
                aria-label={`Remove choice ${i + 1}`}
                disabled={d.choices.length === 1}
                onClick={() =>
                  setD((now) => ({ ...now, choices: now.choices.filter((_, j) => j !== i) }))
                }
              >
                <Icon name="x" />
              </button>
            </div>
          ))}
          <button
            class="btn"
            type="button"
            onClick={() => setD((now) => ({ ...now, choices: [...now.choices, { text: '' }] }))}
          >
            Add a choice
          </button>
        </fieldset>
      )}
      <label class="check">
        <input
          type="checkbox"
          checked={d.summary && summaryAllowed(d.type)}
          disabled={!summaryAllowed(d.type) || (full && !d.summary)}
          onChange={(e) => put({ summary: e.currentTarget.checked })}
        />
        <span>
          Show on the profile card
          {!summaryAllowed(d.type) ? (
            <span class="muted-text"> (not for this type)</span>
          ) : (
            full && !d.summary && <span class="muted-text"> (two fields are shown already)</span>
          )}
        </span>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={d.required}
          onChange={(e) => put({ required: e.currentTarget.checked })}
        />
        <span>Required</span>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={d.editableByUser}
          onChange={(e) => put({ editableByUser: e.currentTarget.checked })}
        />
        <span>People can edit their own value</span>
      </label>
      <FormError error={error} />
      <div class="pf-actions">
        <button class="btn primary" type="submit" disabled={busy}>
          {submit}
        </button>
        <button class="btn" type="button" disabled={busy} onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

addSettingsPanel({
  id: 'profile',
  title: 'Profile',
  order: 20,
  visible: (c) => c.state.value?.self.is_bot !== true,
  render: (c) => <Profile c={c} />,
});
addSettingsPanel({
  id: 'profile-fields',
  title: 'Custom profile fields',
  section: 'organization',
  order: 60,
  visible: isAdmin,
  render: (c) => <ManageFields c={c} />,
});
