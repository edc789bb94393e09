/**
 * The route table: every endpoint module's exports, in one list. One line per module; each
 * module lists its own routes.
 */
import * as clientAssets from './client-assets.js';
import * as messageReport from './message-report.js';
import type { Endpoint } from '../http/endpoint.js';
import * as alertWords from './alert-words.js';
import * as apiKey from './api-key.js';
import * as attachments from './attachments.js';
import * as botStorage from './bot-storage.js';
import * as auth from './auth.js';
import * as bots from './bots.js';
import * as drafts from './drafts.js';
import * as scheduledMessages from './scheduled-messages.js';
import * as playgrounds from './playgrounds.js';
import * as presence from './presence.js';
import * as realmUserDefaults from './realm-user-defaults.js';
import * as savedSnippets from './saved-snippets.js';
import * as userStatus from './user-status.js';
import * as events from './events.js';
import * as invites from './invites.js';
import * as join from './join.js';
import * as mailOutbox from './mail-outbox.js';
import * as messageEdit from './message-edit.js';
import * as messageFlags from './message-flags.js';
import * as messageRender from './message-render.js';
import * as messages from './messages.js';
import * as passwordReset from './password-reset.js';
import * as profileFields from './profile-fields.js';
import * as pushDevices from './push-devices.js';
import * as reactions from './reactions.js';
import * as submessages from './submessages.js';
import * as reading from './reading.js';
import * as realmEmoji from './realm-emoji.js';
import * as realmIcon from './realm-icon.js';
import * as realmExport from './realm-export.js';
import * as realmSettings from './realm.js';
import * as realmLinkifiers from './realm-linkifiers.js';
import * as serverSettings from './server-settings.js';
import * as session from './session.js';
import * as settings from './settings.js';
import * as typing from './typing.js';
import * as upload from './upload.js';
import * as externalContent from './external-content.js';
import * as streamSettings from './stream-settings.js';
import * as streams from './streams.js';
import * as subscriptions from './subscriptions.js';
import * as topics from './topics.js';
import * as userAdmin from './user-admin.js';
import * as userGroups from './user-groups.js';
import * as users from './users.js';
import * as webhooks from './webhooks.js';

function endpointsOf(mod: Record<string, unknown>): Endpoint[] {
  return Object.values(mod).filter(
    (v): v is Endpoint => typeof v === 'object' && v !== null && 'compiled' in v && 'handle' in v,
  );
}

export const ENDPOINTS: readonly Endpoint[] = [
  alertWords,
  attachments,
  auth,
  bots,
  botStorage,
  clientAssets,
  drafts,
  events,
  invites,
  join,
  messageEdit,
  messageFlags,
  messageReport,
  messageRender,
  messages,
  passwordReset,
  profileFields,
  pushDevices,
  reactions,
  submessages,
  reading,
  realmEmoji,
  realmIcon,
  realmExport,
  realmSettings,
  realmLinkifiers,
  scheduledMessages,
  serverSettings,
  session,
  settings,
  subscriptions,
  streams,
  streamSettings,
  topics,
  typing,
  upload,
  externalContent,
  userAdmin,
  userGroups,
  users,
  webhooks,
  playgrounds,
  presence,
  realmUserDefaults,
  savedSnippets,
  userStatus,
  mailOutbox,
  apiKey,
].flatMap(endpointsOf);
