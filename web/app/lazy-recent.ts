/**
 * Recent conversations' view: a chunk loaded when first shown, or when the browser is idle after
 * the first screen (shell.tsx, lazy.tsx). Its entry in the sidebar (recent-entry.tsx) and its
 * conversations (state/recent.ts, kept by the chat state from the events) are in the first load.
 */
export { RecentView } from './recent.js';

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
