/**
 * A queue's registration for the delivery tests (test/delivery): POST /register's defaults for the
 * given user and realm, `o` overriding them, `caps` the client capabilities set.
 */
import { capabilitiesFrom, type QueueSettings } from '../../src/delivery/filter.js';

export function queueSettings(
  userId: number,
  realmId: number,
  o: Partial<QueueSettings> = {},
  caps: readonly string[] = [],
): QueueSettings {
  return {
    userId,
    realmId,
    eventTypes: null,
    applyMarkdown: true,
    clientExtAvatar: false,
    slimPresence: false,
    allPublicStreams: false,
    narrow: [],
    capabilities: capabilitiesFrom(Object.fromEntries(caps.map((c) => [c, true]))),
    lifespanMs: null,
    ...o,
  };
}
