/**
 * The message list and the compose box, and the Drafts and Scheduled messages views: a chunk
 * loaded when first shown (the Inbox, the default home view, shows none of them), or when the
 * browser is idle after the first screen (shell.tsx, lazy.tsx). With them the emoji picker, which
 * the compose box and a message's actions open: there from their first click, it takes the focus
 * and the keys typed at once, as it did before it was loaded lazily (app-fast-input).
 */
export { Compose } from './compose.js';
export { EmojiPicker } from './emoji-picker.js';
export { MessagePane } from './message-pane.js';
export { DraftsView, ScheduledView } from './scheduled.js';

// The controller's code for the message actions' requests (controller.ts), fetched with this piece rather than at
// the first call.
import './controller-messages.js';

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
