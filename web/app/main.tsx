/**
 * The app's entry: the theme the user chose last (before anything is drawn), then the session —
 * a live one opens the app, none shows the login form — and nothing else until then.
 */
import { options, render } from 'preact';
import { signal } from '@preact/signals';
import { ConfabClient } from '../../src/client/api.js';
import { Controller, type Session } from './controller.js';
import { scheduleRender } from './frame.js';
import { startTheme } from './theme.js';
import { LazyPart, piece } from './lazy.js';
import { loadViewSoon, Shell } from './shell.js';
import '../styles/app.css';
// The settings' panels load with the settings (shell.tsx); their stylesheet is small and stays here.
import '../styles/bots.css';
import '../styles/widgets.css';
import '../styles/scheduled.css';
import '../styles/organization.css';
import '../styles/users.css';
import '../styles/profile-fields.css';
import '../styles/user-groups.css';
import '../styles/members.css';
import '../styles/settings-more.css';
import '../styles/message-menu.css';
import '../styles/mute-invites.css';
import '../styles/read-receipts.css';
import '../styles/recent.css';
import '../styles/inbox.css';

startTheme();

// Draw at the next frame (the user's own input at once): frame.ts.
options.debounceRendering = scheduleRender;

const root = document.getElementById('app')!;
const controller = signal<Controller | null>(null);
const phase = signal<'checking' | 'login' | 'app'>('checking');

/**
 * What this browser last knew of its session here ('1' it had one, '0' it saw it end). The
 * session cookie is HttpOnly: the page learns of a session only by asking (`GET
 * /json/session?optional=true`, which answers none without an error, so that a first visit logs
 * nothing on the console). It does not ask after it saw the session end (a logout, a 401): the
 * login form shows at once, unless the page comes from the invitation form, which logs the new
 * user in. With no record (a first visit, or a session older than the record) it asks, so that
 * no live session is ever taken for none.
 */
const HINT = 'confab.session';
function hint(on: boolean): void {
  try {
    localStorage.setItem(HINT, on ? '1' : '0');
  } catch {
    // no storage (a private window's settings): the app asks every time
  }
}
function maybeSession(): boolean {
  try {
    if (localStorage.getItem(HINT) !== '0') return true;
  } catch {
    return true;
  }
  const from = document.referrer ? new URL(document.referrer) : null;
  return (
    from !== null &&
    from.origin === location.origin &&
    /^\/(join|accounts\/do_confirm)\//.test(from.pathname)
  );
}

/**
 * The login form's code, a chunk of its own (a logged-in page never runs it): fetched at once
 * when the page can tell there is no session or may be none (the browser's record says it ended,
 * or it has none: a first visit), beside the session's request; after the answer only when the
 * record said there was one (a session that expired meanwhile). docs/web.md, "Budgets".
 */
const loginPiece = piece(() => import('./login.js'));

/** Whether this browser has a record of its session here (either way). */
function recorded(): boolean {
  try {
    return localStorage.getItem(HINT) !== null;
  } catch {
    return false;
  }
}

function open(session: Session): void {
  hint(true);
  // The code of the view the page opens on (the message list, Recent conversations), fetched
  // beside the data rather than after it (shell.tsx).
  loadViewSoon(location.hash);
  const c = new Controller(session, () => {
    hint(false);
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
  return (
    <LazyPart piece={loginPiece} what="the login form" show={(m) => <m.Login onSession={open} />} />
  );
}

render(<Root />, root);

if (!maybeSession()) {
  loginPiece.load().catch(() => undefined);
  phase.value = 'login';
} else {
  if (!recorded()) loginPiece.load().catch(() => undefined);
  ConfabClient.sessionIfAny(location.origin)
    .then((s) => {
      if (s) return open({ userId: s.user_id, email: s.email, csrfToken: s.csrf_token });
      hint(false);
      phase.value = 'login';
    })
    .catch((e: unknown) => {
      console.warn('Confab: no session', e);
      phase.value = 'login';
    });
}

/**
 * Re-exported by every module the app imports dynamically (the pieces loaded when first used:
 * lazy-*.ts, settings-panels.ts, jump.tsx, controller-*.ts), and read by none: so every module of
 * the first load is reached from every entry of the build, and the bundler (esbuild, which puts
 * the code shared by entries in one chunk per set of entries that reach it) puts the whole first
 * load in one chunk, this script being an import of it. Without it, a chunk per set of pieces
 * sharing a part of it: seven files, each compressed alone, 4 KB more gzip and more requests.
 * test/deploy/web-budget checks the number of files; docs/web.md, "Budgets".
 */
export const firstLoad = true;
