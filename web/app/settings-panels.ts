/**
 * The settings area with every panel, loaded the first time settings open (shell.tsx imports it
 * dynamically: its own chunk of the build, not part of the first screen's script).
 */
import './users.js'; // the Users panel (active, deactivated, bots)
import './bots.js'; // the Bots and Mail outbox panels
import './profile-fields.js'; // the Profile and Custom profile fields panels
import './organization.js'; // the Organization and Custom emoji panels
import './user-groups.js'; // the User groups panel
import './settings-more.js'; // Alert words, Uploaded files, Default channels, Linkifiers, Code playgrounds
import './mute-invites.js'; // Muted users, Invitations
import './data-exports.js'; // Data exports
export { Settings } from './settings.js';

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
