/**
 * The realm actor's command table: command type → the mutation that runs it. Each area adds its
 * mutations here (`'noun.verb'` names). The payload and result types of `ask()` come from this
 * table, so an endpoint cannot send a command with the wrong shape.
 */
import type { Mutation } from '../src/mutations/context.js';
import {
  doAddLinkifier,
  doRemoveLinkifier,
  doReorderLinkifiers,
  doUpdateLinkifier,
} from '../src/mutations/linkifiers.js';
import { checkCreateProfileField, doUpdateProfileData } from '../src/mutations/profile-fields.js';
import { doUpdateRealmSettings } from '../src/mutations/realm-settings.js';
import {
  checkArchiveChannel,
  checkChangeDefaultStream,
  checkCreateChannelFolder,
  checkUpdateChannel,
} from '../src/mutations/channels.js';
import {
  checkSubscribe,
  checkUnsubscribe,
  checkUpdateSubscriptions,
  doChangeSubscriptionProperties,
} from '../src/mutations/subscriptions.js';
import {
  checkCreateUserGroup,
  checkDeactivateUserGroup,
  checkUpdateUserGroup,
  checkUpdateUserGroupMembers,
} from '../src/mutations/user-groups.js';
import { doSetUserTopic } from '../src/mutations/user-topics.js';
import { doUpdateMessageFlags } from '../src/mutations/message-flags.js';
import { checkDeleteMessage, checkSendMessage } from '../src/mutations/messages.js';
import { checkAddReaction, checkRemoveReaction } from '../src/mutations/reactions.js';
import { checkAddRealmEmoji, checkRemoveRealmEmoji } from '../src/mutations/realm-emoji.js';
import { checkCreateUser, checkDeactivateUser } from '../src/mutations/users.js';

export const REALM_COMMANDS = {
  'user.create': checkCreateUser,
  'user.deactivate': checkDeactivateUser,
  'profile_field.create': checkCreateProfileField,
  'user.profile_data.update': doUpdateProfileData,
  'linkifier.add': doAddLinkifier,
  'linkifier.update': doUpdateLinkifier,
  'linkifier.remove': doRemoveLinkifier,
  'linkifier.reorder': doReorderLinkifiers,
  'realm.update_settings': doUpdateRealmSettings,
  'channel.subscribe': checkSubscribe,
  'channel.unsubscribe': checkUnsubscribe,
  'channel.subscriptions.update': checkUpdateSubscriptions,
  'channel.update': checkUpdateChannel,
  'channel.archive': checkArchiveChannel,
  'channel.default': checkChangeDefaultStream,
  'channel_folder.create': checkCreateChannelFolder,
  'subscription.properties': doChangeSubscriptionProperties,
  'user_topic.set': doSetUserTopic,
  'user_group.create': checkCreateUserGroup,
  'user_group.update': checkUpdateUserGroup,
  'user_group.members': checkUpdateUserGroupMembers,
  'user_group.deactivate': checkDeactivateUserGroup,
  'message.send': checkSendMessage,
  'message.delete': checkDeleteMessage,
  'message.flags.update': doUpdateMessageFlags,
  'reaction.add': checkAddReaction,
  'reaction.remove': checkRemoveReaction,
  'realm_emoji.add': checkAddRealmEmoji,
  'realm_emoji.remove': checkRemoveRealmEmoji,
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
