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
} satisfies Record<string, Mutation<never, unknown>>;

export type CommandTable = Record<string, Mutation<never, unknown>>;
export type RealmCommands = typeof REALM_COMMANDS;
export type CommandType = keyof RealmCommands;
export type PayloadOf<K extends CommandType> = Parameters<RealmCommands[K]>[1];
export type ResultOf<K extends CommandType> = ReturnType<RealmCommands[K]>;
