/**
 * The realm actor's command table: command type → the mutation that runs it. Each area adds its
 * mutations here (`'noun.verb'` names). The payload and result types of `ask()` come from this
 * table, so an endpoint cannot send a command with the wrong shape.
 */
import { checkReportMessage, doReportMessage } from '../src/mutations/message-report.js';
import { checkAddSubmessage, doAddSubmessage } from '../src/mutations/submessages.js';
import { checkSetRealmIcon, doSetRealmIcon } from '../src/mutations/realm-icon.js';
import {
  checkCreateAttachment,
  checkRemoveAttachment,
  doCreateAttachment,
  doRemoveAttachment,
  doUpdateMessageAttachments,
} from '../src/mutations/attachments.js';
import { doThumbnailDone, doThumbnailFailed } from '../src/mutations/thumbnails.js';
import { doAddAlertWords, doRemoveAlertWords } from '../src/mutations/alert-words.js';
import { doPutBotStorage, doRemoveBotStorage } from '../src/mutations/bot-storage.js';
import { checkThenDo, type Mutation } from '../src/mutations/context.js';
import { doRecordMailOutcome } from '../src/mutations/mail.js';
import { doMailMissedMessages, doNoteQueueGone } from '../src/mutations/missed-messages.js';
import { doOutgoingWebhookDone } from '../src/mutations/outgoing-webhooks.js';
import {
  checkCreateBot,
  checkDeactivateBot,
  checkRegenerateBotApiKey,
  checkUpdateBot,
  doCreateBot,
  doDeactivateBot,
  doRegenerateBotApiKey,
  doUpdateBot,
} from '../src/mutations/bots.js';
import {
  checkCompletePasswordReset,
  doCompletePasswordReset,
  doRequestPasswordReset,
} from '../src/mutations/password-reset.js';
import {
  checkCreateDrafts,
  checkDeleteDraft,
  checkEditDraft,
  doCreateDrafts,
  doDeleteDraft,
  doEditDraft,
} from '../src/mutations/drafts.js';
import {
  checkAcceptInvitation,
  doAcceptInvitation,
  doCreateMultiuseInvite,
  doInviteUsers,
  checkCreateMultiuseInvite,
  checkInviteUsers,
  checkResendInvite,
  checkRevokeInvite,
  checkRevokeMultiuseInvite,
  doRevokeInvite,
  doRevokeMultiuseInvite,
  doResendInvite,
} from '../src/mutations/invites.js';
import {
  checkAddLinkifier,
  checkRemoveLinkifier,
  checkReorderLinkifiers,
  checkUpdateLinkifier,
  doAddLinkifier,
  doRemoveLinkifier,
  doReorderLinkifiers,
  doUpdateLinkifier,
} from '../src/mutations/linkifiers.js';
import {
  checkCreateProfileField,
  checkDeleteProfileField,
  checkRemoveProfileData,
  checkReorderProfileFields,
  checkUpdateProfileData,
  checkUpdateProfileField,
  doCreateProfileField,
  doDeleteProfileField,
  doReorderProfileFields,
  doUpdateProfileField,
  doRemoveProfileData,
  doUpdateProfileData,
} from '../src/mutations/profile-fields.js';
import {
  checkRemovePushDevice,
  doAddPushDevice,
  doRemovePushDevice,
} from '../src/mutations/push-devices.js';
import { checkUpdateRealm, doUpdateRealm } from '../src/mutations/realm-admin.js';
import {
  checkDeactivateRealm,
  doDeactivateRealm,
  doReactivateRealm,
} from '../src/mutations/realm-deactivate.js';
import {
  checkReactivateUser,
  checkUpdateUser,
  doReactivateUser,
  doUpdateUser,
} from '../src/mutations/user-admin.js';
import {
  checkChangeSettings,
  checkConfirmEmailChange,
  doChangeSettings,
  doConfirmEmailChange,
} from '../src/mutations/user-settings.js';
import {
  checkUpdateRealmSettings,
  doUpdateRealmSettings,
} from '../src/mutations/realm-settings.js';
import {
  checkArchiveChannel,
  checkChangeDefaultStream,
  checkCreateChannelFolder,
  checkUpdateChannel,
  doArchiveChannel,
  doUpdateChannel,
  doChangeDefaultStream,
  doCreateChannelFolder,
} from '../src/mutations/channels.js';
import {
  checkChangeSubscriptionProperties,
  checkSubscribe,
  checkUnsubscribe,
  checkUpdateSubscriptions,
  doChangeSubscriptionProperties,
  doSubscribe,
  doUnsubscribe,
  doUpdateSubscriptions,
} from '../src/mutations/subscriptions.js';
import {
  checkCreateUserGroup,
  checkDeactivateUserGroup,
  checkUpdateUserGroup,
  checkUpdateUserGroupMembers,
  doCreateUserGroup,
  doDeactivateUserGroup,
  doUpdateUserGroup,
  doUpdateUserGroupMembers,
} from '../src/mutations/user-groups.js';
import { checkSetUserTopic, doSetUserTopic } from '../src/mutations/user-topics.js';
import { checkUpdateMessageFlags, doUpdateMessageFlags } from '../src/mutations/message-flags.js';
import { checkDeleteMessage, doDeleteMessage, sendMessageOnce } from '../src/mutations/messages.js';
import { checkUpdateMessage, doUpdateMessage } from '../src/mutations/message-edit.js';
import {
  checkMuteUser,
  checkUnmuteUser,
  doMuteUser,
  doUnmuteUser,
} from '../src/mutations/muted-users.js';
import {
  checkCreateRealmExport,
  checkDeleteRealmExport,
  checkUpdateRealmExport,
  doCreateRealmExport,
  doDeleteRealmExport,
  doUpdateRealmExport,
} from '../src/mutations/realm-exports.js';
import {
  doDeactivateRealmByAdmin,
  checkRegenerateApiKey,
  checkSetEmail,
  doEndUserSessions,
  doSetEmail,
  checkSetPasswordHash,
  doRegenerateApiKey,
  doSetPasswordHash,
  ensureSystemBot,
} from '../src/mutations/operations.js';
import {
  checkDeleteTopicBatch,
  checkMarkAsRead,
  doDeleteTopicBatch,
  doMarkAsRead,
} from '../src/mutations/reading.js';
import {
  checkAddReaction,
  checkRemoveReaction,
  doAddReaction,
  doRemoveReaction,
} from '../src/mutations/reactions.js';
import {
  checkAddRealmEmoji,
  checkRemoveRealmEmoji,
  doAddRealmEmoji,
  doRemoveRealmEmoji,
} from '../src/mutations/realm-emoji.js';
import {
  doDeleteScheduledMessage,
  doDeliverScheduledMessage,
  checkEditScheduledMessage,
  doEditScheduledMessage,
  doFailScheduledMessage,
  doReportScheduledFailure,
  doScheduleMessage,
} from '../src/mutations/scheduled-messages.js';
import {
  checkCreateUser,
  checkDeactivateOwnAccount,
  checkDeactivateUser,
  doCreateUser,
  doDeactivateUser,
  doDeactivateUserByAdmin,
} from '../src/mutations/users.js';
import {
  checkAddPlayground,
  checkRemovePlayground,
  doAddPlayground,
  doRemovePlayground,
} from '../src/mutations/playgrounds.js';
import { doFlushPresence } from '../src/mutations/presence.js';
import {
  checkUpdateRealmUserDefaults,
  doUpdateRealmUserDefaults,
} from '../src/mutations/realm-user-defaults.js';
import {
  checkDeleteSavedSnippet,
  checkEditSavedSnippet,
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
} from '../src/mutations/saved-snippets.js';
import { doUpdateUserStatus } from '../src/mutations/user-status.js';
import { doSendWelcome, doWelcomeBotReply } from '../src/mutations/welcome.js';
import { doCreateSession, doDeleteSession } from '../src/mutations/sessions.js';

export const REALM_COMMANDS = {
  'user.create': checkThenDo(checkCreateUser, doCreateUser),
  'user.deactivate': checkThenDo(checkDeactivateUser, doDeactivateUserByAdmin),
  'user.deactivate_own': checkThenDo(checkDeactivateOwnAccount, doDeactivateUser),
  'profile_field.create': checkThenDo(checkCreateProfileField, doCreateProfileField),
  'user.profile_data.update': checkThenDo(checkUpdateProfileData, doUpdateProfileData),
  // Settings and administration of users and the realm.
  'user.settings.update': checkThenDo(checkChangeSettings, doChangeSettings),
  'user.email_change.confirm': checkThenDo(checkConfirmEmailChange, doConfirmEmailChange),
  'user.update': checkThenDo(checkUpdateUser, doUpdateUser),
  'user.reactivate': checkThenDo(checkReactivateUser, doReactivateUser),
  'user.profile_data.remove': checkThenDo(checkRemoveProfileData, doRemoveProfileData),
  'user.push_device.add': doAddPushDevice,
  'user.push_device.remove': checkThenDo(checkRemovePushDevice, doRemovePushDevice),
  'profile_field.update': checkThenDo(checkUpdateProfileField, doUpdateProfileField),
  'profile_field.delete': checkThenDo(checkDeleteProfileField, doDeleteProfileField),
  'profile_field.reorder': checkThenDo(checkReorderProfileFields, doReorderProfileFields),
  'realm.update': checkThenDo(checkUpdateRealm, doUpdateRealm),
  'realm.deactivate': checkThenDo(checkDeactivateRealm, doDeactivateRealm),
  // Internal (the reference reactivates through a confirmation link): tests, admin tools.
  'realm.reactivate': doReactivateRealm,
  'linkifier.add': checkThenDo(checkAddLinkifier, doAddLinkifier),
  'linkifier.update': checkThenDo(checkUpdateLinkifier, doUpdateLinkifier),
  'linkifier.remove': checkThenDo(checkRemoveLinkifier, doRemoveLinkifier),
  'linkifier.reorder': checkThenDo(checkReorderLinkifiers, doReorderLinkifiers),
  'realm.update_settings': checkThenDo(checkUpdateRealmSettings, doUpdateRealmSettings),
  'realm.icon.set': checkThenDo(checkSetRealmIcon, doSetRealmIcon),
  'channel.subscribe': checkThenDo(checkSubscribe, doSubscribe),
  'channel.unsubscribe': checkThenDo(checkUnsubscribe, doUnsubscribe),
  'channel.subscriptions.update': checkThenDo(checkUpdateSubscriptions, doUpdateSubscriptions),
  'channel.update': checkThenDo(checkUpdateChannel, doUpdateChannel),
  'channel.archive': checkThenDo(checkArchiveChannel, doArchiveChannel),
  'channel.default': checkThenDo(checkChangeDefaultStream, doChangeDefaultStream),
  'channel_folder.create': checkThenDo(checkCreateChannelFolder, doCreateChannelFolder),
  'subscription.properties': checkThenDo(
    checkChangeSubscriptionProperties,
    doChangeSubscriptionProperties,
  ),
  'user_topic.set': checkThenDo(checkSetUserTopic, doSetUserTopic),
  'user_group.create': checkThenDo(checkCreateUserGroup, doCreateUserGroup),
  'user_group.update': checkThenDo(checkUpdateUserGroup, doUpdateUserGroup),
  'user_group.members': checkThenDo(checkUpdateUserGroupMembers, doUpdateUserGroupMembers),
  'user_group.deactivate': checkThenDo(checkDeactivateUserGroup, doDeactivateUserGroup),
  'attachment.create': checkThenDo(checkCreateAttachment, doCreateAttachment),
  'attachment.remove': checkThenDo(checkRemoveAttachment, doRemoveAttachment),
  'thumbnail.done': doThumbnailDone,
  'thumbnail.failed': doThumbnailFailed,
  'draft.create': checkThenDo(checkCreateDrafts, doCreateDrafts),
  'draft.edit': checkThenDo(checkEditDraft, doEditDraft),
  'draft.delete': checkThenDo(checkDeleteDraft, doDeleteDraft),
  'alert_words.add': doAddAlertWords,
  'alert_words.remove': doRemoveAlertWords,
  'bot_storage.put': doPutBotStorage,
  'bot_storage.remove': doRemoveBotStorage,
  'invite.create': checkThenDo(checkInviteUsers, doInviteUsers),
  'invite.create_multiuse': checkThenDo(checkCreateMultiuseInvite, doCreateMultiuseInvite),
  'invite.revoke': checkThenDo(checkRevokeInvite, doRevokeInvite),
  'invite.revoke_multiuse': checkThenDo(checkRevokeMultiuseInvite, doRevokeMultiuseInvite),
  'invite.resend': checkThenDo(checkResendInvite, doResendInvite),
  'invitation.accept': checkThenDo(checkAcceptInvitation, doAcceptInvitation),
  // Internal (no endpoint): the message area calls these functions inside its own mutations.
  'attachment.relink': doUpdateMessageAttachments,
  'message.send': sendMessageOnce,
  'message.delete': checkThenDo(checkDeleteMessage, doDeleteMessage),
  'message.update': checkThenDo(checkUpdateMessage, doUpdateMessage),
  'message.report': checkThenDo(checkReportMessage, doReportMessage),
  'message.flags.update': checkThenDo(checkUpdateMessageFlags, doUpdateMessageFlags),
  'reaction.add': checkThenDo(checkAddReaction, doAddReaction),
  'reaction.remove': checkThenDo(checkRemoveReaction, doRemoveReaction),
  'submessage.add': checkThenDo(checkAddSubmessage, doAddSubmessage),
  'realm_emoji.add': checkThenDo(checkAddRealmEmoji, doAddRealmEmoji),
  'realm_emoji.remove': checkThenDo(checkRemoveRealmEmoji, doRemoveRealmEmoji),
  'scheduled_message.create': doScheduleMessage,
  'scheduled_message.edit': checkThenDo(checkEditScheduledMessage, doEditScheduledMessage),
  'scheduled_message.delete': doDeleteScheduledMessage,
  // Internal: the delivery scheduler (actors/scheduled-delivery.ts).
  'scheduled_message.deliver': doDeliverScheduledMessage,
  'scheduled_message.fail': doFailScheduledMessage,
  'scheduled_message.report_failure': doReportScheduledFailure,
  // Presence (the batch write of the in-memory presence), status, snippets, playgrounds,
  // new-user defaults.
  'presence.flush': doFlushPresence,
  'user_status.update': doUpdateUserStatus,
  'saved_snippet.create': doCreateSavedSnippet,
  'saved_snippet.edit': checkThenDo(checkEditSavedSnippet, doEditSavedSnippet),
  'saved_snippet.delete': checkThenDo(checkDeleteSavedSnippet, doDeleteSavedSnippet),
  'playground.add': checkThenDo(checkAddPlayground, doAddPlayground),
  'playground.remove': checkThenDo(checkRemovePlayground, doRemovePlayground),
  'realm.user_settings_defaults.update': checkThenDo(
    checkUpdateRealmUserDefaults,
    doUpdateRealmUserDefaults,
  ),
  // Reading operations in bounded batches (src/mutations/reading.ts), muted users.
  'message.mark_read': checkThenDo(checkMarkAsRead, doMarkAsRead),
  'topic.delete': checkThenDo(checkDeleteTopicBatch, doDeleteTopicBatch),
  'user.mute': checkThenDo(checkMuteUser, doMuteUser),
  'user.unmute': checkThenDo(checkUnmuteUser, doUnmuteUser),
  // The admin tool (src/admin/commands.ts) and new realms' onboarding (src/realm-setup.ts).
  'user.system_bot.ensure': ensureSystemBot,
  'user.welcome.send': doSendWelcome,
  // The Welcome Bot's answer to a direct message (src/endpoints/messages.ts, after the send).
  'user.welcome.reply': doWelcomeBotReply,
  'user.password.set': checkThenDo(checkSetPasswordHash, doSetPasswordHash),
  'user.api_key.regenerate': checkThenDo(checkRegenerateApiKey, doRegenerateApiKey),
  'realm.deactivate_by_admin': doDeactivateRealmByAdmin,
  'user.email.set': checkThenDo(checkSetEmail, doSetEmail),
  'user.sessions.end': doEndUserSessions,
  // Realm exports requested through the API (src/endpoints/realm-export.ts).
  'realm_export.create': checkThenDo(checkCreateRealmExport, doCreateRealmExport),
  'realm_export.update': checkThenDo(checkUpdateRealmExport, doUpdateRealmExport),
  'realm_export.delete': checkThenDo(checkDeleteRealmExport, doDeleteRealmExport),
  // Browser login sessions (src/http/sessions.ts).
  'session.create': doCreateSession,
  'session.delete': doDeleteSession,
  // Internal: the mail sender's record of a delivery (src/mail/sender.ts).
  'mail.outcome': doRecordMailOutcome,
  // Internal: missed-message mail (src/mail/missed-messages.ts) and a user's last queue gone.
  'missed_messages.mail': doMailMissedMessages,
  'missed_messages.queue_gone': doNoteQueueGone,
  // Internal: an outgoing-webhook call done (src/bots/outgoing-webhooks.ts).
  'outgoing_webhook.done': doOutgoingWebhookDone,
  // Bots (src/endpoints/bots.ts).
  'bot.create': checkThenDo(checkCreateBot, doCreateBot),
  'bot.update': checkThenDo(checkUpdateBot, doUpdateBot),
  'bot.api_key.regenerate': checkThenDo(checkRegenerateBotApiKey, doRegenerateBotApiKey),
  'bot.deactivate': checkThenDo(checkDeactivateBot, doDeactivateBot),
  // Password resets by mail (src/endpoints/password-reset.ts).
  'user.password_reset.request': doRequestPasswordReset,
  'user.password_reset.complete': checkThenDo(checkCompletePasswordReset, doCompletePasswordReset),
} satisfies Record<string, Mutation<never, unknown>>;

export type CommandTable = Record<string, Mutation<never, unknown>>;

/**
 * Commands that may share a transaction with other queued ones (group commit; see
 * realm.machine.ts). Each must not depend on another command's afterCommit refresh.
 */
export const BATCHABLE_COMMANDS: ReadonlySet<string> = new Set(['message.send']);
export type RealmCommands = typeof REALM_COMMANDS;
export type CommandType = keyof RealmCommands;
export type PayloadOf<K extends CommandType> = Parameters<RealmCommands[K]>[1];
export type ResultOf<K extends CommandType> = ReturnType<RealmCommands[K]>;
