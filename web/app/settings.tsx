/**
 * The settings area (`#settings/<panel>`): a list of panels, each a title and a view. Other parts
 * of the app add theirs with `addSettingsPanel` (bots, the mail outbox): nothing else to change.
 * Panels here: account, display (theme, clock), notifications (the browser's permission and the
 * user's settings), invitations (a link, and e-mail invitations when the server sends mail).
 */
import type { ComponentChild } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Controller } from './controller.js';
import { useLive } from './live.js';
import { track } from './track.js';
import { Icon } from './icons.js';
import { CopyField } from './copy-field.js';
import { CloseButton, FormError } from './bits.js';
import { useFocusBack, wrapTab } from './focus-back.js';

export type SettingsPanel = {
  id: string;
  title: string;
  /**
   * Which part of the list it is in, as the reference's settings divide them: one's own
   * (default) or the organization's.
   */
  section?: 'personal' | 'organization';
  /** Its place in its part (lower first; equal ones in the order added). */
  order: number;
  /** Whether this user sees the panel (default: everyone). */
  visible?: (c: Controller) => boolean;
  render: (c: Controller) => ComponentChild;
};

const SECTIONS = [
  { id: 'personal', title: 'Personal' },
  { id: 'organization', title: 'Organization' },
] as const;

const panels: SettingsPanel[] = [];

/** Adds a panel to the settings area (in the order added). */
export function addSettingsPanel(p: SettingsPanel): void {
  const at = panels.findIndex((x) => x.id === p.id);
  if (at >= 0) panels[at] = p;
  else panels.push(p);
}

export function Settings({ c, panel }: { c: Controller; panel: string }) {
  const visible = panels.filter((p) => p.visible?.(c) ?? true);
  const parts = SECTIONS.map((sec) => ({
    ...sec,
    panels: visible
      .filter((p) => (p.section ?? 'personal') === sec.id)
      .sort((a, b) => a.order - b.order),
  })).filter((part) => part.panels.length > 0);
  const shown = parts.flatMap((part) => part.panels);
  const current = shown.find((p) => p.id === panel) ?? shown[0]!;
  const box = useRef<HTMLDivElement>(null);
  // The focus in it as it opens (on the panel shown, in its list), and back after.
  useFocusBack(box, () => box.current?.querySelector<HTMLElement>('[aria-current="page"]'));
  // The panel changed by its address (the browser's back, a link): the focus follows to the
  // shown panel's link in the list, as a click there would leave it, unless the new panel took
  // it. Not as it opens (useFocusBack gives it then).
  const panelShown = useRef(current.id);
  useLayoutEffect(() => {
    if (panelShown.current === current.id) return;
    panelShown.current = current.id;
    const el = box.current;
    if (!el || el.querySelector('section')?.contains(document.activeElement)) return;
    el.querySelector<HTMLElement>('nav [aria-current="page"]')?.focus({ preventScroll: true });
  }, [current.id]);

  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && c.closeSettings()}>
      <div
        ref={box}
        class="dialog settings settings-wrap"
        role="dialog"
        aria-modal="true"
        aria-labelledby="settings-title"
        onKeyDown={(e) => wrapTab(box.current, e)}
      >
        <nav aria-label="Settings">
          <h2 id="settings-title">Settings</h2>
          {parts.map((part) => (
            <div key={part.id} class="settings-part">
              <div class="nav-heading" id={`settings-part-${part.id}`}>
                {part.title}
              </div>
              <ul class="nav-list" aria-labelledby={`settings-part-${part.id}`}>
                {part.panels.map((p) => (
                  <li key={p.id}>
                    <a
                      class="nav-item"
                      href={`#settings/${p.id}`}
                      aria-current={p.id === current.id ? 'page' : undefined}
                    >
                      <span class="label">{p.title}</span>
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        {/* Keyed: another panel is drawn anew, nothing of the last one (its focus) kept. */}
        <section key={current.id} aria-labelledby="panel-title">
          <h3 id="panel-title">{current.title}</h3>
          {current.render(c)}
        </section>
        <CloseButton class="close" label="Close settings" onClick={() => c.closeSettings()} />
      </div>
    </div>
  );
}

function Check({
  c,
  setting,
  label,
  hint,
}: {
  c: Controller;
  setting: string;
  label: string;
  hint?: string;
}) {
  const s = c.state.value!;
  track(s.rev.settings);
  const on = s.settings[setting] === true;
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={on}
        onChange={(e) => {
          const value = e.currentTarget.checked;
          c.client
            .updateSettings({ [setting]: value })
            .catch((err: unknown) => c.toast(err instanceof Error ? err.message : String(err)));
        }}
      />
      <span>
        {label}
        {hint && <div class="muted-text">{hint}</div>}
      </span>
    </label>
  );
}

/** A numeric setting of the user's, chosen from a list (saved as it is chosen). */
function Pick({
  c,
  setting,
  label,
  choices,
  hint,
}: {
  c: Controller;
  setting: string;
  label: string;
  choices: readonly (readonly [number, string])[];
  hint?: string;
}) {
  const s = c.state.value!;
  track(s.rev.settings);
  const id = `setting-${setting}`;
  return (
    <div class="org-field setting-pick">
      <label for={id}>{label}</label>
      <select
        id={id}
        class="field"
        value={String(Number(s.settings[setting]))}
        onChange={(e) => {
          const value = Number(e.currentTarget.value);
          c.client
            .updateSettings({ [setting]: value })
            .catch((err: unknown) => c.toast(err instanceof Error ? err.message : String(err)));
        }}
      >
        {choices.map(([value, text]) => (
          <option key={value} value={String(value)}>
            {text}
          </option>
        ))}
      </select>
      {hint && <span class="muted-text">{hint}</span>}
    </div>
  );
}

/**
 * The choices of `automatically_follow_topics_policy` and of its unmuting twin, as the server
 * numbers them (src/mutations/auto-follow.ts).
 */
const TOPIC_TRIGGERS = [
  [1, 'Topics I take part in'],
  [2, 'Topics I send a message to'],
  [3, 'Topics I start'],
  [4, 'Never'],
] as const;

function Account({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users);
  const methods = c.serverSettings.authentication_methods as Record<string, boolean> | undefined;
  return (
    <>
      <p>
        <strong>{s.self.full_name}</strong>
        <br />
        <span class="muted-text">{s.self.email}</span>
      </p>
      <p class="muted-text">
        Organization: {s.realm.name} ({location.origin})
      </p>
      <button class="btn" type="button" onClick={() => void c.logout()}>
        <Icon name="logout" />
        Log out
      </button>
      <FullName c={c} />
      {methods?.password !== false && <Password c={c} />}
      <ApiKey c={c} />
    </>
  );
}

/** What a failure says (the server's words for a refused request). */
export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The user's name as the organization shows it (the server checks it, and the realm's rules). */
function FullName({ c }: { c: Controller }) {
  const s = c.state.value!;
  // Sent as typed until now (Enter right after typing, before the redraw).
  const [name, setName, nameNow] = useLive(s.self.full_name);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    const full_name = nameNow.current.trim();
    if (full_name === s.self.full_name) return;
    setBusy(true);
    setError(null);
    try {
      await c.client.updateSettings({ full_name });
      c.toast('Your name was changed.', 'info');
    } catch (e) {
      setError(errorText(e));
    }
    setBusy(false);
  };
  return (
    <form
      class="account-form"
      aria-labelledby="full-name-title"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h4 id="full-name-title">Your name</h4>
      <div class="row">
        <input
          class="field"
          aria-label="Your name"
          autocomplete="name"
          maxLength={60}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <button class="btn" type="submit" disabled={busy}>
          Save
        </button>
      </div>
      <FormError error={error} />
    </form>
  );
}

/** A new password, for the current one; this browser stays logged in, the user's others end. */
function Password({ c }: { c: Controller }) {
  const [open, setOpen] = useState(false);
  const [old, setOld, oldNow] = useLive('');
  const [next, setNext, nextNow] = useLive('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => {
    setOpen(false);
    setOld('');
    setNext('');
    setError(null);
  };
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await c.client.updateSettings({
        old_password: oldNow.current,
        new_password: nextNow.current,
      });
      close();
      c.toast('Your password was changed.', 'info');
    } catch (e) {
      setError(errorText(e));
    }
    setBusy(false);
  };
  return (
    <div class="account-form" role="group" aria-labelledby="password-title">
      <h4 id="password-title">Password</h4>
      {open ? (
        <form
          class="stack-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <input
            class="field"
            type="password"
            autocomplete="current-password"
            aria-label="Current password"
            placeholder="Current password"
            required
            value={old}
            onInput={(e) => setOld(e.currentTarget.value)}
          />
          <input
            class="field"
            type="password"
            autocomplete="new-password"
            aria-label="New password"
            placeholder="New password"
            required
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
          <div class="row">
            <button class="btn primary" type="submit" disabled={busy}>
              Change password
            </button>
            <button class="btn" type="button" onClick={close}>
              Cancel
            </button>
          </div>
          <p class="muted-text">Your other browser sessions are logged out.</p>
        </form>
      ) : (
        <button class="btn" type="button" onClick={() => setOpen(true)}>
          Change my password
        </button>
      )}
      <FormError error={error} />
    </div>
  );
}

/** A zuliprc file, as the API's Python bindings and the terminal client read it. */
function zuliprc(email: string, key: string): string {
  return `[api]\nemail=${email}\nkey=${key}\nsite=${location.origin}\n`;
}

/**
 * The user's API key, for programs acting as them (scripts, the terminal client): shown only
 * when asked for, for the password (as the reference's "Manage your API key"), and kept only
 * while shown; a new one can be made (programs holding the old one stop working, and the user's
 * other browser sessions end).
 */
function ApiKey({ c }: { c: Controller }) {
  const s = c.state.value!;
  const methods = c.serverSettings.authentication_methods as Record<string, boolean> | undefined;
  const needsPassword = methods?.password !== false;
  const [open, setOpen] = useState(false);
  // Sent as typed until now (the form sent right after typing, before the redraw).
  const [password, setPassword, passwordNow] = useLive('');
  const [key, setKey] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fail = (e: unknown) => setError(e instanceof Error ? e.message : String(e));
  const show = async () => {
    setBusy(true);
    setError(null);
    try {
      setKey((await c.client.ownApiKey(passwordNow.current)).api_key);
      setPassword('');
    } catch (e) {
      fail(e);
    }
    setBusy(false);
  };
  const renew = async () => {
    const ok = await c.ask({
      title: 'Make a new API key?',
      text: 'Programs using the current key stop working, and your other browser sessions are logged out.',
      action: 'Make a new key',
      danger: true,
    });
    if (!ok) return;
    setBusy(true);
    setError(null);
    try {
      setKey((await c.client.regenerateApiKey()).api_key);
      c.toast('A new API key was made.', 'info');
    } catch (e) {
      fail(e);
    }
    setBusy(false);
  };
  const hide = () => {
    setKey(null);
    setOpen(false);
    setError(null);
  };
  return (
    <div class="api-key" role="group" aria-labelledby="api-key-title">
      <h4 id="api-key-title">API key</h4>
      <p class="muted-text">
        Programs acting as you (scripts, bots of your own, the terminal client) use your API key.
        Keep it secret: it works like your password.
      </p>
      {key !== null ? (
        <>
          <CopyField c={c} value={key} label="Your API key" copied="API key copied.">
            <a
              class="btn"
              download="zuliprc"
              href={`data:application/octet-stream,${encodeURIComponent(zuliprc(s.self.email, key))}`}
            >
              Download zuliprc
            </a>
          </CopyField>
          <div class="row">
            <button class="btn" type="button" disabled={busy} onClick={() => void renew()}>
              Make a new key
            </button>
            <button class="btn" type="button" onClick={hide}>
              Hide
            </button>
          </div>
        </>
      ) : open ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void show();
          }}
        >
          {needsPassword && (
            <input
              class="field"
              type="password"
              autocomplete="current-password"
              aria-label="Your password"
              placeholder="Your password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
          <button class="btn primary" type="submit" disabled={busy}>
            Show the key
          </button>
          <button class="btn" type="button" onClick={hide}>
            Cancel
          </button>
        </form>
      ) : (
        <button class="btn" type="button" onClick={() => setOpen(true)}>
          Show my API key
        </button>
      )}
      <FormError error={error} />
    </div>
  );
}

function Display({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings);
  const scheme = s.settings.color_scheme ?? 1;
  const choice = (value: 1 | 2 | 3, label: string) => (
    <button
      class="btn"
      type="button"
      aria-pressed={scheme === value}
      onClick={() => void c.setTheme(value)}
      style={
        scheme === value ? { borderColor: 'var(--accent)', color: 'var(--accent)' } : undefined
      }
    >
      {label}
    </button>
  );
  return (
    <>
      <p class="muted-text">Theme</p>
      <div class="choice-row" role="group" aria-label="Theme">
        {choice(1, 'Same as the system')}
        {choice(3, 'Light')}
        {choice(2, 'Dark')}
      </div>
      <Check c={c} setting="twenty_four_hour_time" label="24-hour clock" />
      <HomeView c={c} />
    </>
  );
}

/**
 * The view the app opens on (`web_home_view`): the Inbox (the default), Recent conversations or
 * All messages.
 */
function HomeView({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings);
  const home = s.settings.web_home_view;
  const value = typeof home === 'string' ? home : 'inbox';
  return (
    <div class="org-field setting-pick">
      <label for="setting-web_home_view">Home view</label>
      <select
        id="setting-web_home_view"
        class="field"
        value={value}
        onChange={(e) => {
          c.client
            .updateSettings({ web_home_view: e.currentTarget.value })
            .catch((err: unknown) => c.toast(err instanceof Error ? err.message : String(err)));
        }}
      >
        <option value="inbox">Inbox</option>
        <option value="recent_topics">Recent conversations</option>
        <option value="all_messages">All messages</option>
      </select>
      <span class="muted-text">What the app shows when the address names no view.</span>
    </div>
  );
}

function Notifications({ c }: { c: Controller }) {
  const supported = typeof Notification !== 'undefined';
  const [perm, setPerm] = useState(supported ? Notification.permission : 'unsupported');
  return (
    <>
      <p class="muted-text">
        {perm === 'granted'
          ? 'This browser shows Confab notifications.'
          : perm === 'denied'
            ? 'This browser blocks notifications from Confab; allow them in the site settings.'
            : perm === 'unsupported'
              ? 'This browser cannot show notifications.'
              : 'Allow this browser to show notifications for direct messages and mentions.'}
      </p>
      {perm === 'default' && (
        <button
          class="btn primary"
          type="button"
          onClick={() => void c.requestNotifications().then((p) => setPerm(p))}
        >
          <Icon name="bell" />
          Allow notifications
        </button>
      )}
      <Check
        c={c}
        setting="enable_desktop_notifications"
        label="Notify me of direct messages and mentions"
      />
      <Check
        c={c}
        setting="enable_stream_desktop_notifications"
        label="Notify me of every message in my channels"
        hint="Each channel can override this."
      />
      <Check
        c={c}
        setting="wildcard_mentions_notify"
        label="Notify me of @all and @topic mentions"
        hint="Each channel can override this."
      />
      <Check c={c} setting="enable_sounds" label="Play a sound for direct messages and mentions" />
      <Check
        c={c}
        setting="enable_stream_audible_notifications"
        label="Play a sound for every message in my channels"
        hint="Each channel can override this."
      />
      <h4>Topics</h4>
      <Pick
        c={c}
        setting="automatically_follow_topics_policy"
        label="Follow topics automatically"
        choices={TOPIC_TRIGGERS}
        hint="Taking part: sending a message, reacting, or voting in a poll."
      />
      <Pick
        c={c}
        setting="automatically_unmute_topics_in_muted_streams_policy"
        label="Unmute topics in muted channels automatically"
        choices={TOPIC_TRIGGERS}
      />
      <Check
        c={c}
        setting="automatically_follow_topics_where_mentioned"
        label="Follow topics where I am mentioned"
      />
    </>
  );
}

const ROLES: [number, string][] = [
  [400, 'Member'],
  [600, 'Guest'],
  [300, 'Moderator'],
  [200, 'Administrator'],
];

function Invitations({ c }: { c: Controller }) {
  const s = c.state.value!;
  // Sent as chosen and typed until now (a form sent right after typing, before the redraw).
  const [role, setRole, roleNow] = useLive(400);
  const [expiry, setExpiry, expiryNow] = useLive('10080');
  const [link, setLink] = useState<string | null>(null);
  const [emails, setEmails, emailsNow] = useLive('');
  const [sent, setSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const roles = ROLES.filter(([r]) => r >= (s.self.role ?? 400));
  const expires = () => (expiryNow.current === 'never' ? null : Number(expiryNow.current));
  const canLink = s.canCreateInviteLink();
  const canMail = s.canInviteByEmail() && c.serverSettings.outgoing_mail_enabled === true;
  const fail = (e: unknown) => c.toast(e instanceof Error ? e.message : String(e));

  const makeLink = async () => {
    setBusy(true);
    try {
      const r = await c.client.createInviteLink({
        invite_as: roleNow.current,
        invite_expires_in_minutes: expires(),
        include_realm_default_subscriptions: true,
        stream_ids: [],
      });
      setLink(r.invite_link);
    } catch (e) {
      fail(e);
    }
    setBusy(false);
  };
  const sendMail = async (e: Event) => {
    e.preventDefault();
    const to = emailsNow.current;
    setBusy(true);
    try {
      await c.client.sendInvites({
        invitee_emails: to,
        invite_as: roleNow.current,
        invite_expires_in_minutes: expires(),
        include_realm_default_subscriptions: true,
        stream_ids: [],
      });
      setSent(`Invitations sent to ${to}.`);
      setEmails('');
    } catch (err) {
      fail(err);
    }
    setBusy(false);
  };

  // Nothing to choose when the user may invite by neither means: only why.
  if (!canLink && !canMail)
    return <p class="muted-text">Only administrators can invite people to this organization.</p>;

  return (
    <>
      <p class="muted-text">
        Invite people to {s.realm.name}. They join the organization's default channels.
      </p>
      <div class="form-row">
        <label class="stack">
          Join as
          <select
            class="field"
            value={String(role)}
            onChange={(e) => setRole(Number(e.currentTarget.value))}
          >
            {roles.map(([r, name]) => (
              <option key={r} value={String(r)}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label class="stack">
          Valid for
          <select class="field" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
            <option value="1440">1 day</option>
            <option value="10080">7 days</option>
            <option value="43200">30 days</option>
            <option value="never">Never expires</option>
          </select>
        </label>
      </div>
      {canMail && (
        <form onSubmit={(e) => void sendMail(e)}>
          <label class="stack">
            E-mail addresses (separated by commas)
            <input
              class="field"
              type="text"
              required
              value={emails}
              onInput={(e) => setEmails(e.currentTarget.value)}
              placeholder="ada@example.com, grace@example.com"
            />
          </label>
          <button class="btn primary" type="submit" disabled={busy}>
            Send invitations
          </button>
          {sent && (
            <p class="muted-text" role="status">
              {sent}
            </p>
          )}
        </form>
      )}
      {canLink && (
        <>
          <p>
            <button class="btn" type="button" disabled={busy} onClick={() => void makeLink()}>
              <Icon name="link" />
              Create an invitation link
            </button>
          </p>
          {link && <CopyField c={c} value={link} label="Invitation link" copied="Link copied." />}
        </>
      )}
    </>
  );
}

addSettingsPanel({ id: 'account', title: 'Account', order: 10, render: (c) => <Account c={c} /> });
addSettingsPanel({ id: 'display', title: 'Display', order: 30, render: (c) => <Display c={c} /> });
addSettingsPanel({
  id: 'notifications',
  title: 'Notifications',
  order: 40,
  render: (c) => <Notifications c={c} />,
});
addSettingsPanel({
  id: 'invitations',
  title: 'Invite people',
  section: 'organization',
  order: 40,
  render: (c) => <Invitations c={c} />,
});
