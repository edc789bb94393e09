/**
 * The app's entry: the theme the user chose last (before anything is drawn), then the session —
 * a live one opens the app, none shows the login form — and nothing else until then.
 */
import { options, render } from 'preact';
import { signal } from '@preact/signals';
import { ApiError, ConfabClient } from '../../src/client/api.js';
import { Controller, type Session } from './controller.js';
import { scheduleRender } from './frame.js';
import { startTheme } from './theme.js';
import { Login } from './login.js';
import { Shell } from './shell.js';
import '../styles/app.css';
// The settings' panels load with the settings (shell.tsx); their stylesheet is small and stays here.
import '../styles/bots.css';

startTheme();

// Draw at the next frame (the user's own input at once): frame.ts.
options.debounceRendering = scheduleRender;

const root = document.getElementById('app')!;
const controller = signal<Controller | null>(null);
const phase = signal<'checking' | 'login' | 'app'>('checking');

function open(session: Session): void {
  const c = new Controller(session, () => {
    controller.value = null;
    phase.value = 'login';
  });
  controller.value = c;
  phase.value = 'app';
  c.start().catch((e: unknown) => {
    controller.value = null;
    phase.value = 'login';
    console.error(e);
  });
}

function Root() {
  if (phase.value === 'checking') return null;
  const c = controller.value;
  if (phase.value === 'app' && c) return <Shell c={c} />;
  return <Login onSession={open} />;
}

render(<Root />, root);

ConfabClient.session(location.origin)
  .then((s) => open({ userId: s.user_id, email: s.email, csrfToken: s.csrf_token }))
  .catch((e: unknown) => {
    if (!(e instanceof ApiError && e.status === 401)) console.warn('Confab: no session', e);
    phase.value = 'login';
  });
