/**
 * The page's theme: the user's choice (light or dark), or the system's, followed as it changes.
 * `html[data-theme]` always says which applies, so the stylesheet defines each theme once. The
 * choice is kept in the browser for the next load (before the user's settings arrive).
 */
export type ThemeChoice = 'light' | 'dark' | '';

const KEY = 'confab.theme';
const system = window.matchMedia('(prefers-color-scheme: dark)');
let choice: ThemeChoice = '';

function show(): void {
  document.documentElement.dataset.theme = choice || (system.matches ? 'dark' : 'light');
}

/** Applies and remembers a choice ('' follows the system). */
export function setTheme(next: ThemeChoice): void {
  choice = next;
  show();
  try {
    localStorage.setItem(KEY, next);
  } catch {
    // not kept for the next load; the user's setting still applies after login
  }
}

/** The theme of the last visit, at once, and the system's changes from now on. */
export function startTheme(): void {
  try {
    const stored = localStorage.getItem(KEY);
    if (stored === 'light' || stored === 'dark') choice = stored;
  } catch {
    // storage unavailable: the system's theme
  }
  show();
  system.addEventListener('change', show);
}

/** Whether the dark theme shows now. */
export function isDark(): boolean {
  return document.documentElement.dataset.theme === 'dark';
}
