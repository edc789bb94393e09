/**
 * Two settings panels (web/state/bots.ts holds their state): **Bots** — create a bot of each type,
 * the user's bots (every bot for an administrator), the API key shown once at creation and on
 * regeneration, deactivate and reactivate — and, for administrators, **Mail outbox** — the mail
 * waiting for the SMTP server (GET /mail/outbox). Registered with `addSettingsPanel`; settings-panels.ts
 * imports this module.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { requestOf, useChanges, useLive } from './live.js';
import type { Controller } from './controller.js';
import { addSettingsPanel } from './settings.js';
import { CopyField } from './copy-field.js';
import { FormError } from './bits.js';
import { RowAction } from './row-action.js';
import {
  BOT_TYPE_NAMES,
  BotsState,
  BotType,
  kindName,
  OutboxState,
  relativeTime,
  webhookUrl,
  WEBHOOK_INTEGRATIONS,
} from '../state/bots.js';
import type { RevealedKey } from '../state/bots.js';
import { botDeactivationText, reactivationText } from '../state/users.js';

function Bots({ c }: { c: Controller }) {
  const s = c.state.value!;
  const st = useMemo(
    () => new BotsState(requestOf(c), { user_id: s.selfId, role: s.isAdmin ? 200 : 400 }),
    [c, s.selfId],
  );
  useChanges(st);
  useEffect(() => void st.load(), [st]);
  // Sent as typed until now (the form sent right after typing, before the redraw).
  const [fullName, setFullName, fullNameNow] = useLive('');
  const [shortName, setShortName, shortNameNow] = useLive('');
  const [type, setType, typeNow] = useLive<number>(BotType.GENERIC);
  const [url, setUrl, urlNow] = useLive('');

  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await st.create({
      full_name: fullNameNow.current,
      short_name: shortNameNow.current,
      bot_type: typeNow.current,
      payload_url: urlNow.current,
    });
    if (ok) {
      setFullName('');
      setShortName('');
      setUrl('');
    }
  };
  const owner = (id: number | null) =>
    id === null ? '' : id === s.selfId ? 'you' : s.userName(id);
  const key = st.revealed;

  return (
    <>
      <p class="muted-text">
        Bots post through the API with their own key: a generic bot does what a user can, an
        incoming-webhook bot only posts (from GitHub, Grafana and the other integrations), an
        outgoing-webhook bot calls a URL of yours when it is mentioned or sent a direct message.
      </p>
      <form class="bot-form" aria-label="Add a bot" onSubmit={(e) => void submit(e)}>
        <div class="form-row">
          <label class="stack">
            Name
            <input
              class="field"
              type="text"
              required
              maxLength={100}
              value={fullName}
              onInput={(e) => setFullName(e.currentTarget.value)}
              placeholder="Deploy notices"
            />
          </label>
          <label class="stack">
            Username
            <input
              class="field"
              type="text"
              required
              maxLength={60}
              value={shortName}
              onInput={(e) => setShortName(e.currentTarget.value)}
              placeholder="deploys"
            />
          </label>
          <label class="stack">
            Type
            <select
              class="field"
              value={String(type)}
              onChange={(e) => setType(Number(e.currentTarget.value))}
            >
              {Object.entries(BOT_TYPE_NAMES).map(([t, name]) => (
                <option key={t} value={t}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        </div>
        {type === BotType.OUTGOING_WEBHOOK && (
          <label class="stack">
            Endpoint URL
            <input
              class="field"
              type="url"
              required
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
              placeholder="https://bots.example.com/confab"
            />
          </label>
        )}
        <button class="btn primary" type="submit" disabled={st.busy}>
          Add bot
        </button>
      </form>
      <FormError error={st.error} />
      {key && (
        <div class="bot-key" role="status" aria-label="New API key">
          <p>
            The API key of <strong>{key.full_name}</strong> ({key.email}). It is shown only now:
            copy it into the bot’s configuration.
          </p>
          <CopyField c={c} value={key.api_key} label="API key" copied="Key copied.">
            <button class="btn" type="button" onClick={() => st.dismissKey()}>
              Done
            </button>
          </CopyField>
          {key.bot_type === BotType.INCOMING_WEBHOOK && <WebhookUrl c={c} bot={key} />}
        </div>
      )}
      <h4 class="bot-heading">{st.isAdmin ? 'Bots of the organization' : 'Your bots'}</h4>
      {!st.loaded ? (
        <p class="muted-text">Loading…</p>
      ) : st.bots.length === 0 ? (
        <p class="muted-text">No bots yet.</p>
      ) : (
        <ul class="bot-list" aria-label="Bots">
          {st.sorted.map((b) => (
            <li key={b.user_id} class={b.is_active ? 'bot-row' : 'bot-row inactive'}>
              <div class="bot-info">
                <strong>{b.full_name}</strong>
                <span class="muted-text">
                  {b.email} · {BOT_TYPE_NAMES[b.bot_type ?? 1] ?? 'Bot'}
                  {st.isAdmin && b.owner_id !== null ? ` · owner: ${owner(b.owner_id)}` : ''}
                  {b.is_active ? '' : ' · deactivated'}
                </span>
              </div>
              <div class="bot-actions">
                {b.is_active ? (
                  <>
                    <RowAction
                      label="New key"
                      busy={st.busy}
                      run={() => st.regenerateKey(b.user_id)}
                    />
                    <RowAction
                      label="Deactivate"
                      name={`Deactivate ${b.full_name}`}
                      danger
                      busy={st.busy}
                      run={() => st.deactivate(b.user_id)}
                      confirm={{
                        c,
                        title: `Deactivate ${b.full_name}?`,
                        text: botDeactivationText(
                          b.full_name,
                          st.isAdmin && b.owner_id !== s.selfId
                            ? 'An administrator'
                            : 'You or an administrator',
                        ),
                      }}
                    />
                  </>
                ) : (
                  <RowAction
                    label="Reactivate"
                    name={`Reactivate ${b.full_name}`}
                    busy={st.busy}
                    run={() => st.reactivate(b.user_id)}
                    confirm={{
                      c,
                      title: `Reactivate ${b.full_name}?`,
                      text: reactivationText({ full_name: b.full_name, is_bot: true }),
                    }}
                  />
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/**
 * An incoming-webhook bot's URL, built from its key just shown (the reference's "Generate URL"):
 * the service and the channel chosen here, copied into the service's webhook settings.
 */
function WebhookUrl({ c, bot }: { c: Controller; bot: RevealedKey }) {
  const s = c.state.value!;
  const [integration, setIntegration] = useState('json');
  const [channel, setChannel] = useState<number | null>(null);
  const realmUrl = s.realm.url || location.origin;
  return (
    <div class="bot-webhook">
      <p>
        Its webhook URL: the service posts there as {bot.full_name}, to the channel chosen (without
        one, to the bot’s owner as a direct message).
      </p>
      <div class="form-row">
        <label class="stack">
          Integration
          <select
            class="field"
            value={integration}
            onChange={(e) => setIntegration(e.currentTarget.value)}
          >
            {Object.entries(WEBHOOK_INTEGRATIONS).map(([name, title]) => (
              <option key={name} value={name}>
                {title}
              </option>
            ))}
          </select>
        </label>
        <label class="stack">
          Channel
          <select
            class="field"
            value={channel === null ? '' : String(channel)}
            onChange={(e) =>
              setChannel(e.currentTarget.value ? Number(e.currentTarget.value) : null)
            }
          >
            <option value="">None (a direct message to its owner)</option>
            {s.sortedSubs().map((x) => (
              <option key={x.stream_id} value={String(x.stream_id)}>
                #{x.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <CopyField
        c={c}
        value={webhookUrl(realmUrl, integration, bot.api_key, channel)}
        label="Webhook URL"
        copied="URL copied."
      />
    </div>
  );
}

function Outbox({ c }: { c: Controller }) {
  const st = useMemo(() => new OutboxState(requestOf(c)), [c]);
  useChanges(st);
  useEffect(() => void st.load(), [st]);
  const now = Math.floor(Date.now() / 1000);
  return (
    <>
      <p class="muted-text">
        Mail of this organization waiting for the SMTP server: tried again with growing waits,
        dropped (and logged) after too many failures.
      </p>
      <p>
        <button class="btn" type="button" onClick={() => void st.load()}>
          Refresh
        </button>
      </p>
      <FormError error={st.error} />
      {!st.loaded ? (
        <p class="muted-text">Loading…</p>
      ) : !st.enabled ? (
        <p class="muted-text">This server sends no mail (SMTP_URL is not set).</p>
      ) : st.count === 0 ? (
        <p class="muted-text" role="status">
          The outbox is empty: every mail has gone out.
        </p>
      ) : (
        <>
          <p role="status">
            {st.count === 1 ? '1 mail waiting' : `${st.count} mails waiting`}
            {st.count > st.mails.length ? ` (the oldest ${st.mails.length} shown)` : ''}
          </p>
          <table class="outbox" aria-label="Mail outbox">
            <thead>
              <tr>
                <th>Mail</th>
                <th>To</th>
                <th>Tries</th>
                <th>Next try</th>
                <th>Last error</th>
              </tr>
            </thead>
            <tbody>
              {st.mails.map((m) => (
                <tr key={m.id}>
                  <td>
                    <strong>{kindName(m.kind)}</strong>
                    <div class="muted-text">{m.subject}</div>
                  </td>
                  <td>{m.recipient}</td>
                  <td>{m.attempts}</td>
                  <td>{relativeTime(m.next_attempt_at, now)}</td>
                  <td class="outbox-error">{m.last_error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}

addSettingsPanel({
  id: 'bots',
  title: 'Bots',
  order: 50,
  visible: (c) => c.state.value?.self.is_guest !== true && (c.state.value?.self.role ?? 400) < 600,
  render: (c) => <Bots c={c} />,
});
addSettingsPanel({
  id: 'outbox',
  title: 'Mail outbox',
  section: 'organization',
  order: 90,
  visible: (c) => c.state.value?.isAdmin === true,
  render: (c) => <Outbox c={c} />,
});
