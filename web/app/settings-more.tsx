/**
 * Five settings panels over what the server keeps and the events bring (ChatState's alert words,
 * uploads, linkifiers, default channels and playgrounds; web/state/settings-more.ts computes):
 * **Alert words** and **Uploaded files**, the user's own; **Default channels**, **Linkifiers**
 * and **Code playgrounds**, the organization's, which administrators change and everyone else
 * reads. Each shows the server's refusal as it gave it. Registered with `addSettingsPanel`;
 * settings-panels.ts imports this module.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Controller } from './controller.js';
import { addSettingsPanel, errorText } from './settings.js';
import { FormError, Swatch } from './bits.js';
import { Outcome, RowAction, useAction } from './row-action.js';
import { track } from './track.js';
import { useLive } from './live.js';
import { fullTime } from './format.js';
import {
  addableChannels,
  attachmentRows,
  defaultChannelRows,
  defaultChannelsAdded,
  linkifierExample,
  moved,
  parseAlertWords,
  playgroundRows,
  quotaText,
  sortedAlertWords,
  type Attachment,
  type Linkifier,
} from '../state/settings-more.js';
import { sizeText } from '../state/format.js';

/**
 * The focus kept in the panel when what had it went away (a row removed, here or by another
 * session, after its Delete or Remove): on `target`, once `list` changed.
 */
export function useRefocus(list: unknown, target: () => HTMLElement | null | undefined): void {
  useEffect(() => {
    const at = document.activeElement;
    if (at && at !== document.body) return;
    target()?.focus();
  }, [list]);
}

const readOnlyNote = (what: string) => (
  <p class="muted-text">Only administrators can change the organization’s {what}.</p>
);

// ---- Alert words -------------------------------------------------------------------------

function AlertWords({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras);
  const words = sortedAlertWords(s.alertWords);
  const [input, setInput, inputNow] = useLive('');
  const act = useAction();
  const field = useRef<HTMLInputElement>(null);
  useRefocus(s.alertWords, () => field.current);
  const add = async (e: Event) => {
    e.preventDefault();
    const list = parseAlertWords(inputNow.current);
    if (list.length === 0) return act.fail('Type a word or phrase to add.');
    const ok = await act.run(
      () => c.client.request('POST', '/users/me/alert_words', { alert_words: list }),
      list.length === 1 ? `Added “${list[0]}”.` : `Added ${list.length} alert words.`,
    );
    if (ok) setInput('');
  };
  return (
    <>
      <p class="muted-text">
        Messages with one of your alert words notify you as a mention does, and show the word
        highlighted. Words match whole and whatever their case.
      </p>
      <form class="more-form" aria-label="Add alert words" onSubmit={(e) => void add(e)}>
        <label class="stack">
          New alert words (several separated by commas)
          <div class="row">
            <input
              ref={field}
              class="field"
              type="text"
              maxLength={1000}
              value={input}
              onInput={(e) => setInput(e.currentTarget.value)}
              placeholder="release, outage"
            />
            <button class="btn primary" type="submit" disabled={act.busy}>
              Add
            </button>
          </div>
        </label>
      </form>
      <Outcome error={act.error} done={act.done} />
      {words.length === 0 ? (
        <p class="muted-text">You have no alert words yet.</p>
      ) : (
        <ul class="more-list" aria-label="Your alert words">
          {words.map((w) => (
            <li key={w}>
              <span class="more-word">{w}</span>
              <RowAction
                label="Remove"
                name={`Remove ${w}`}
                danger
                act={act}
                request={() =>
                  c.client.request('DELETE', '/users/me/alert_words', { alert_words: [w] })
                }
                said={`Removed “${w}”.`}
              />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A day as "Dec 6, 2026" (the full time in its title). */
export const shortDate = (ms: number) =>
  new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

// ---- Uploaded files ----------------------------------------------------------------------

function Uploads({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras, s.rev.settings);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const act = useAction();
  const filterField = useRef<HTMLInputElement>(null);
  useRefocus(s.uploads, () => filterField.current);
  useEffect(() => {
    c.client
      .request<{ attachments: Attachment[]; upload_space_used?: number }>('GET', '/attachments')
      .then((r) => s.setUploads(r.attachments, r.upload_space_used ?? null))
      .catch((e: unknown) => setLoadError(errorText(e)));
  }, [c, s]);
  const uploads = s.uploads;
  const quota = s.realm.settings.realm_upload_quota_mib;
  const deleting = (a: Attachment) => ({
    c,
    title: `Delete ${a.name}?`,
    text:
      a.messages.length === 0
        ? 'The file is deleted for good.'
        : `The file is deleted for good: the ${a.messages.length === 1 ? 'message' : `${a.messages.length} messages`} linking to it will show a broken link.`,
  });
  if (!uploads)
    return loadError ? <FormError error={loadError} /> : <p class="muted-text">Loading…</p>;
  const rows = attachmentRows(uploads.list, filter);
  // Where a message is, when the app holds it (else its number).
  const messagePlace = (id: number) => {
    const m = s.messages.get(id);
    if (m?.type === 'stream' && m.stream_id !== undefined)
      return `#${s.channels.get(m.stream_id)?.name ?? 'channel'} › ${m.subject || s.realm.emptyTopicName}`;
    return m ? 'A direct message' : `Message ${id}`;
  };
  const mine = uploads.list.reduce((n, a) => n + a.size, 0);
  return (
    <>
      <p class="muted-text">
        The files you uploaded:{' '}
        {uploads.list.length === 1 ? '1 file' : `${uploads.list.length} files`}, {sizeText(mine)}.{' '}
        {uploads.spaceUsed !== null &&
          quotaText(uploads.spaceUsed, typeof quota === 'number' ? quota : null)}
      </p>
      <input
        ref={filterField}
        class="field more-filter"
        type="search"
        aria-label="Filter uploaded files"
        placeholder="Filter by name"
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <Outcome error={act.error} done={act.done} />
      {uploads.list.length === 0 ? (
        <p class="muted-text">You have not uploaded any files.</p>
      ) : rows.length === 0 ? (
        <p class="muted-text">No file matches.</p>
      ) : (
        <table class="more-table" aria-label="Uploaded files">
          <thead>
            <tr>
              <th>File</th>
              <th>Uploaded</th>
              <th>Used in</th>
              <th>Size</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr key={a.id}>
                <td class="more-name">
                  <a href={`/user_uploads/${a.path_id}`} target="_blank" rel="noopener noreferrer">
                    {a.name}
                  </a>
                </td>
                <td class="more-nowrap" data-label="Uploaded">
                  <time
                    dateTime={new Date(a.create_time).toISOString()}
                    title={fullTime(Math.floor(a.create_time / 1000))}
                  >
                    {shortDate(a.create_time)}
                  </time>
                </td>
                <td data-label="Used in">
                  {a.messages.length === 0 ? (
                    <span class="muted-text">No message</span>
                  ) : (
                    a.messages.map((m, i) => (
                      <span key={m.id}>
                        {i > 0 && ', '}
                        <a href={`#narrow/id/${m.id}`}>{messagePlace(m.id)}</a>
                      </span>
                    ))
                  )}
                </td>
                <td class="more-nowrap" data-label="Size">
                  {sizeText(a.size)}
                </td>
                <td>
                  <RowAction
                    label="Delete"
                    name={`Delete ${a.name}`}
                    danger
                    confirm={deleting(a)}
                    act={act}
                    request={() => c.client.request('DELETE', `/attachments/${a.id}`)}
                    said={`Deleted ${a.name}.`}
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

// ---- Default channels --------------------------------------------------------------------

function DefaultChannels({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras, s.rev.channels);
  const admin = s.isAdmin;
  const rows = defaultChannelRows(s.defaultStreams, s.channels);
  const choices = addableChannels(s.defaultStreams, s.channels);
  // The channels ticked; one that became a default channel meanwhile (here or elsewhere) drops
  // out as its box goes.
  const [chosen, setChosen] = useState<ReadonlySet<number>>(new Set());
  const ticked = choices.filter((ch) => chosen.has(ch.stream_id)).map((ch) => ch.stream_id);
  const act = useAction();
  const box = useRef<HTMLFieldSetElement>(null);
  useRefocus(s.defaultStreams, () => box.current?.querySelector('input'));
  const name = (id: number) => s.channels.get(id)?.name ?? `channel ${id}`;
  const tick = (id: number, on: boolean) =>
    setChosen((was) => {
      const next = new Set(was);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  // Several at once, as the reference's "Add default channels" does: the API takes one channel
  // a request, so one each; those refused stay ticked, each refusal said with its channel.
  const add = async (e: Event) => {
    e.preventDefault();
    if (ticked.length === 0) return act.fail('Choose the channels to add.');
    const refused = await act.runEach(
      ticked,
      (id) => c.client.request('POST', '/default_streams', { stream_id: id }),
      (ok) => defaultChannelsAdded(ok.map(name)),
      (id, why) => `#${name(id)} was not added: ${why}`,
    );
    // (A box ticked while the requests ran stays ticked.)
    const added = ticked.filter((id) => !refused.includes(id));
    setChosen((was) => new Set([...was].filter((id) => !added.includes(id))));
  };
  return (
    <>
      <p class="muted-text">
        New users join these channels when they sign up (invitations can add others).
      </p>
      {admin ? (
        <form class="more-form" aria-label="Add default channels" onSubmit={(e) => void add(e)}>
          <fieldset ref={box} class="more-choices">
            <legend>Channels to add</legend>
            {choices.length === 0 ? (
              <p class="muted-text">Every public channel is a default channel already.</p>
            ) : (
              choices.map((ch) => (
                <label key={ch.stream_id} class="check">
                  <input
                    type="checkbox"
                    checked={chosen.has(ch.stream_id)}
                    onChange={(e) => tick(ch.stream_id, e.currentTarget.checked)}
                  />
                  {/* (Public ones only: addableChannels.) */}
                  <span class="more-channel">
                    <Swatch color={s.subs.get(ch.stream_id)?.color ?? '#9aa0ad'} />
                    {ch.name}
                  </span>
                </label>
              ))
            )}
          </fieldset>
          <button class="btn primary" type="submit" disabled={act.busy || choices.length === 0}>
            {ticked.length > 1 ? `Add ${ticked.length} channels` : 'Add'}
          </button>
        </form>
      ) : (
        readOnlyNote('default channels')
      )}
      <Outcome error={act.error} done={act.done} />
      {rows.length === 0 ? (
        <p class="muted-text">No default channels: new users join none.</p>
      ) : (
        <ul class="more-list" aria-label="Default channels">
          {rows.map((ch) => (
            <li key={ch.stream_id}>
              <span class="more-channel">
                <Swatch
                  color={s.subs.get(ch.stream_id)?.color ?? '#9aa0ad'}
                  privateChannel={ch.invite_only}
                />
                {ch.name}
              </span>
              {admin && (
                <RowAction
                  label="Remove"
                  name={`Remove ${ch.name}`}
                  danger
                  act={act}
                  request={() =>
                    c.client.request('DELETE', '/default_streams', { stream_id: ch.stream_id })
                  }
                  said={`#${name(ch.stream_id)} is no longer a default channel.`}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

// ---- Linkifiers --------------------------------------------------------------------------

/** The pattern and template fields of the add form and of a row being edited. */
function LinkifierFields(p: {
  pattern: string;
  template: string;
  setPattern: (v: string) => void;
  setTemplate: (v: string) => void;
}) {
  return (
    <div class="form-row">
      <label class="stack">
        Pattern
        <input
          class="field more-code"
          type="text"
          required
          value={p.pattern}
          onInput={(e) => p.setPattern(e.currentTarget.value)}
          placeholder="#(?P<id>[0-9]+)"
        />
      </label>
      <label class="stack">
        URL template
        <input
          class="field more-code"
          type="text"
          required
          value={p.template}
          onInput={(e) => p.setTemplate(e.currentTarget.value)}
          placeholder="https://github.com/zulip/zulip/issues/{id}"
        />
      </label>
    </div>
  );
}

function Linkifiers({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras, s.rev.users);
  const admin = s.isAdmin;
  const list = s.linkifiers;
  const [pattern, setPattern, patternNow] = useLive('');
  const [template, setTemplate, templateNow] = useLive('');
  const [editing, setEditing] = useState<number | null>(null);
  const [ePattern, setEPattern, ePatternNow] = useLive('');
  const [eTemplate, setETemplate, eTemplateNow] = useLive('');
  const act = useAction();
  const addForm = useRef<HTMLFormElement>(null);
  const rowsBox = useRef<HTMLOListElement>(null);
  // The arrow just used, to keep the focus on (its row moved; the other arrow at an end), and
  // the order it asked for.
  const movedBy = useRef<{ id: number; by: -1 | 1; order: number[] } | null>(null);
  useEffect(() => {
    const m = movedBy.current;
    // (The arrows are disabled while a request runs: once it is answered, and the event has
    // brought the new order — the answer may come first; a refusal leaves the order as it was.)
    if (!m || act.busy) return;
    if (!act.error && list.map((l) => l.id).join() !== m.order.join()) return;
    movedBy.current = null;
    const arrow = (by: number) =>
      rowsBox.current?.querySelector<HTMLButtonElement>(`button[data-move="${m.id}:${by}"]`);
    const same = arrow(m.by);
    (same && !same.disabled ? same : arrow(-m.by))?.focus();
  }, [list, act.busy, act.error]);
  useRefocus(list, () => addForm.current?.querySelector('input'));
  const add = async (e: Event) => {
    e.preventDefault();
    const ok = await act.run(
      () =>
        c.client.request('POST', '/realm/filters', {
          pattern: patternNow.current.trim(),
          url_template: templateNow.current.trim(),
        }),
      'Linkifier added.',
    );
    if (ok) {
      setPattern('');
      setTemplate('');
    }
  };
  const edit = (l: Linkifier) => {
    setEditing(l.id);
    setEPattern(l.pattern);
    setETemplate(l.url_template);
  };
  const save = async (e: Event, id: number) => {
    e.preventDefault();
    const ok = await act.run(
      () =>
        c.client.request('PATCH', `/realm/filters/${id}`, {
          pattern: ePatternNow.current.trim(),
          url_template: eTemplateNow.current.trim(),
        }),
      'Linkifier saved.',
    );
    if (ok) setEditing(null);
  };
  const move = (id: number, by: -1 | 1) => {
    const order = moved(
      list.map((l) => l.id),
      id,
      by,
    );
    if (!order) return;
    movedBy.current = { id, by, order };
    void act.run(
      () => c.client.request('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: order }),
      'Order saved.',
    );
  };
  return (
    <>
      <p class="muted-text">
        Linkifiers turn text matching a pattern in messages and topics into links: a pattern (a
        regular expression, with named groups) and a URL template using the groups, as{' '}
        <code>{'{id}'}</code>. The first linkifier that matches a text wins.
      </p>
      {admin ? (
        <form
          ref={addForm}
          class="more-form"
          aria-label="Add a linkifier"
          onSubmit={(e) => void add(e)}
        >
          <LinkifierFields
            pattern={pattern}
            template={template}
            setPattern={setPattern}
            setTemplate={setTemplate}
          />
          <button class="btn primary" type="submit" disabled={act.busy}>
            Add linkifier
          </button>
        </form>
      ) : (
        readOnlyNote('linkifiers')
      )}
      <Outcome error={act.error} done={act.done} />
      {list.length === 0 ? (
        <p class="muted-text">This organization has no linkifiers yet.</p>
      ) : (
        <ol ref={rowsBox} class="more-rows" aria-label="Linkifiers">
          {list.map((l, i) => {
            if (editing === l.id)
              return (
                <li key={l.id}>
                  <form
                    class="more-form"
                    aria-label="Edit the linkifier"
                    onSubmit={(e) => void save(e, l.id)}
                  >
                    <LinkifierFields
                      pattern={ePattern}
                      template={eTemplate}
                      setPattern={setEPattern}
                      setTemplate={setETemplate}
                    />
                    <div class="row">
                      <button class="btn primary" type="submit" disabled={act.busy}>
                        Save
                      </button>
                      <button class="btn" type="button" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </div>
                  </form>
                </li>
              );
            const example = linkifierExample(l);
            return (
              <li key={l.id} class="more-row">
                <dl class="more-facts">
                  <dt>Pattern</dt>
                  <dd>
                    <code>{l.pattern}</code>
                  </dd>
                  <dt>URL template</dt>
                  <dd>
                    <code>{l.url_template}</code>
                  </dd>
                  {example && (
                    <>
                      <dt>Example</dt>
                      <dd>
                        <code>{example.text}</code> → <span class="more-url">{example.url}</span>
                      </dd>
                    </>
                  )}
                </dl>
                {admin && (
                  <div class="more-actions">
                    <button
                      class="btn"
                      type="button"
                      disabled={act.busy || i === 0}
                      data-move={`${l.id}:-1`}
                      aria-label={`Move ${l.pattern} up`}
                      onClick={() => move(l.id, -1)}
                    >
                      ↑
                    </button>
                    <button
                      class="btn"
                      type="button"
                      disabled={act.busy || i === list.length - 1}
                      data-move={`${l.id}:1`}
                      aria-label={`Move ${l.pattern} down`}
                      onClick={() => move(l.id, 1)}
                    >
                      ↓
                    </button>
                    <button
                      class="btn"
                      type="button"
                      aria-label={`Edit ${l.pattern}`}
                      onClick={() => edit(l)}
                    >
                      Edit
                    </button>
                    <RowAction
                      label="Delete"
                      name={`Delete ${l.pattern}`}
                      danger
                      confirm={{
                        c,
                        title: 'Delete this linkifier?',
                        text: `New messages no longer link ${l.pattern}; messages sent already keep their links.`,
                      }}
                      act={act}
                      request={() => c.client.request('DELETE', `/realm/filters/${l.id}`)}
                      said="Linkifier deleted."
                    />
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}

// ---- Code playgrounds --------------------------------------------------------------------

function Playgrounds({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.extras, s.rev.users);
  const admin = s.isAdmin;
  const rows = playgroundRows(s.playgrounds);
  const [name, setName, nameNow] = useLive('');
  const [language, setLanguage, languageNow] = useLive('');
  const [template, setTemplate, templateNow] = useLive('');
  const act = useAction();
  const addForm = useRef<HTMLFormElement>(null);
  useRefocus(s.playgrounds, () => addForm.current?.querySelector('input'));
  const add = async (e: Event) => {
    e.preventDefault();
    const ok = await act.run(
      () =>
        c.client.request('POST', '/realm/playgrounds', {
          name: nameNow.current.trim(),
          pygments_language: languageNow.current.trim(),
          url_template: templateNow.current.trim(),
        }),
      'Playground added.',
    );
    if (ok) {
      setName('');
      setLanguage('');
      setTemplate('');
    }
  };
  return (
    <>
      <p class="muted-text">
        A code block in a language with a playground offers to open its code there: the URL template
        gets the code as <code>{'{code}'}</code>.
      </p>
      {admin ? (
        <form
          ref={addForm}
          class="more-form"
          aria-label="Add a code playground"
          onSubmit={(e) => void add(e)}
        >
          <div class="form-row">
            <label class="stack">
              Language
              <input
                class="field"
                type="text"
                required
                value={language}
                onInput={(e) => setLanguage(e.currentTarget.value)}
                placeholder="Rust"
              />
            </label>
            <label class="stack">
              Name
              <input
                class="field"
                type="text"
                required
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
                placeholder="Rust playground"
              />
            </label>
          </div>
          <label class="stack">
            URL template
            <input
              class="field more-code"
              type="text"
              required
              value={template}
              onInput={(e) => setTemplate(e.currentTarget.value)}
              placeholder="https://play.rust-lang.org/?code={code}"
            />
          </label>
          <button class="btn primary" type="submit" disabled={act.busy}>
            Add playground
          </button>
        </form>
      ) : (
        readOnlyNote('code playgrounds')
      )}
      <Outcome error={act.error} done={act.done} />
      {rows.length === 0 ? (
        <p class="muted-text">This organization has no code playgrounds yet.</p>
      ) : (
        <table class="more-table" aria-label="Code playgrounds">
          <thead>
            <tr>
              <th>Language</th>
              <th>Name</th>
              <th>URL template</th>
              {admin && (
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id}>
                {/* (Labelled for a phone, where the cells stack without their headers.) */}
                <td data-label="Language">{p.pygments_language}</td>
                <td data-label="Name">{p.name}</td>
                <td class="more-name" data-label="URL template">
                  <code>{p.url_template}</code>
                </td>
                {admin && (
                  <td>
                    <RowAction
                      label="Delete"
                      name={`Delete ${p.name}`}
                      danger
                      confirm={{
                        c,
                        title: `Delete ${p.name}?`,
                        text: 'Code blocks no longer offer to open their code there.',
                      }}
                      act={act}
                      request={() => c.client.request('DELETE', `/realm/playgrounds/${p.id}`)}
                      said={`Deleted ${p.name}.`}
                    />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

// Between Notifications (40) and Bots (50), as the reference lists them.
addSettingsPanel({
  id: 'alert-words',
  title: 'Alert words',
  order: 42,
  render: (c) => <AlertWords c={c} />,
});
addSettingsPanel({
  id: 'uploads',
  title: 'Uploaded files',
  order: 44,
  render: (c) => <Uploads c={c} />,
});
// After User groups (30), before Invite people (40): the channels invitations join.
addSettingsPanel({
  id: 'default-channels',
  title: 'Default channels',
  section: 'organization',
  order: 35,
  visible: (c) => c.state.value?.self.is_guest !== true && (c.state.value?.self.role ?? 400) < 600,
  render: (c) => <DefaultChannels c={c} />,
});
// After Custom emoji (50), before Custom profile fields (60).
addSettingsPanel({
  id: 'linkifiers',
  title: 'Linkifiers',
  section: 'organization',
  order: 55,
  render: (c) => <Linkifiers c={c} />,
});
addSettingsPanel({
  id: 'playgrounds',
  title: 'Code playgrounds',
  section: 'organization',
  order: 57,
  render: (c) => <Playgrounds c={c} />,
});
