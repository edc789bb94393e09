/**
 * The dialogs and cards the first screen does not show: a chunk loaded when one first opens, or
 * when the browser is idle after the first screen (shell.tsx, lazy.tsx); the confirmation dialog
 * (Controller.ask) with them. The settings and their
 * panels are a chunk of their own (settings-panels.ts); the emoji picker comes with the compose
 * box (lazy-messages.ts).
 */
export { ChannelSettings, CreateChannel } from './channel-dialogs.js';
export { ConfirmDialog } from './confirm.js';
export { HistoryDialog, ReceiptsDialog, SourceDialog } from './message-dialogs.js';
export { MoveTopic, offerPartialMoveFor, topicAction } from './move-topic.js';
export { ProfileCard } from './profile-card.js';
export { ShortcutsDialog } from './shortcuts.js';
export { StatusDialog } from './status.js';

// The controller's code for the channel dialogs' requests (controller.ts), fetched with this piece rather than at
// the first call.
import './controller-channels.js';

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
