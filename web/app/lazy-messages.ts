/**
 * The message list and the compose box, and the Drafts and Scheduled messages views: a chunk
 * loaded when first shown (the Inbox, the default home view, shows none of them), or when the
 * browser is idle after the first screen (shell.tsx, lazy.tsx).
 */
export { Compose } from './compose.js';
export { MessagePane } from './message-pane.js';
export { DraftsView, ScheduledView } from './scheduled.js';
