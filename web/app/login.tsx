/**
 * The login form: e-mail and password (`POST /json/login`), the realm's name above it. A chunk of
 * its own, fetched when the page has or may have no session (main.tsx).
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, ConfabClient } from '../../src/client/api.js';
import type { Session } from './controller.js';
import { useLive } from './live.js';
import { settingsForLogin } from './server-settings.js';

export function Login({ onSession }: { onSession: (s: Session) => void }) {
  const [realm, setRealm] = useState('');
  const [email, setEmail, emailNow] = useLive('');
  const [password, setPassword, passwordNow] = useLive('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);

  // The first field has the focus as the form is drawn (not after the next paint): keys typed as
  // the page appears go into it.
  useLayoutEffect(() => first.current?.focus(), []);

  useEffect(() => {
    document.title = 'Log in - Confab';
    settingsForLogin()
      .then((s) => setRealm(typeof s.realm_name === 'string' ? s.realm_name : ''))
      .catch(() => undefined);
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // What the fields hold now: the form may be sent before typing's last drawing.
      const r = await ConfabClient.login(
        location.origin,
        emailNow.current.trim(),
        passwordNow.current,
      );
      onSession({ userId: r.user_id, email: r.email, csrfToken: r.csrf_token });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401)
        setError('Wrong e-mail address or password.');
      else if (err instanceof ApiError) setError(err.message);
      else setError('Could not reach the server. Check your connection and try again.');
      setBusy(false);
    }
  };

  return (
    <main class="login">
      <form class="login-card" onSubmit={(e) => void submit(e)} aria-labelledby="login-title">
        <svg class="login-logo" viewBox="0 0 64 64" aria-hidden="true">
          <rect width="64" height="64" rx="14" fill="#4f5bd5" />
          <path
            d="M18 20h28a6 6 0 0 1 6 6v12a6 6 0 0 1-6 6H30l-9 7v-7h-3a6 6 0 0 1-6-6V26a6 6 0 0 1 6-6z"
            fill="#fff"
          />
        </svg>
        <h1 id="login-title">Log in{realm ? ` to ${realm}` : ''}</h1>
        <p>Confab — your team's chat.</p>
        <label class="stack">
          E-mail address
          <input
            class="field"
            type="email"
            name="username"
            autocomplete="username"
            ref={first}
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label class="stack">
          Password
          <input
            class="field"
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        <button class="btn primary" type="submit" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
