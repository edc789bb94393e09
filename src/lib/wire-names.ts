/**
 * The two spellings of the API's wire names (see docs/api.md "Wire names").
 *
 * The spec replaced a vendor word in a few identifiers; existing clients of the API family use the
 * originals. Input accepts both everywhere; fields that can simply be added are sent under both
 * names; where only one value can be sent (the reaction type of the extra emoji, emoji-set
 * values), the value is spelled in the requester's *dialect*:
 *
 *   - `reference`: a client that names itself as one of the reference family's own clients in its
 *     User-Agent — a product token starting with `Zulip` (the Python bindings `ZulipPython/…` and
 *     the tools built on them: `ZulipTerminal/…`, `ZulipGit/…`, `ZulipRSS/…`; the mobile app
 *     `ZulipFlutter/…`, `ZulipMobile/…`; the desktop app `ZulipElectron/…`), or zulip-js under
 *     Node, which sends no name of its own and so arrives with its HTTP library's fixed agent;
 *   - `spec`: every other client.
 *
 * The server setting WIRE_NAMES (`auto`, the default; `spec`; `reference`) forces one dialect for
 * everybody. An event queue keeps the dialect of the request that registered it.
 */

export type Dialect = 'spec' | 'reference';
export type WireNamesMode = 'auto' | Dialect;

/**
 * The User-Agent zulip-js (npm `zulip-js`) arrives with under Node: it sets no agent itself, and
 * its fetch (isomorphic-fetch → node-fetch 2) sends this fixed string.
 */
const ZULIP_JS_NODE_AGENT = 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)';

/** The dialect a request's User-Agent asks for under `mode`. Cheap: one prefix test. */
export function dialectFor(mode: WireNamesMode, userAgent: string): Dialect {
  if (mode !== 'auto') return mode;
  return userAgent.startsWith('Zulip') || userAgent === ZULIP_JS_NODE_AGENT ? 'reference' : 'spec';
}

// ---- reaction types ----------------------------------------------------------------------------

/** The extra emoji's reaction type, as stored and as the spec spells it. */
export const EXTRA_EMOJI_TYPE = 'service_extra_emoji';
const EXTRA_EMOJI_TYPE_REFERENCE = 'zulip_extra_emoji';

/** A reaction type as a client sent it, in the stored (spec) spelling. */
export function reactionTypeIn(type: string): string {
  return type === EXTRA_EMOJI_TYPE_REFERENCE ? EXTRA_EMOJI_TYPE : type;
}

/** A stored reaction type as `dialect` spells it. */
export function reactionTypeOut(type: string, dialect: Dialect): string {
  return dialect === 'reference' && type === EXTRA_EMOJI_TYPE ? EXTRA_EMOJI_TYPE_REFERENCE : type;
}

/**
 * Objects carrying `reaction_type` (reactions, user statuses) as `dialect` spells them: the same
 * array when nothing changes (the usual case), copies of the changed objects otherwise.
 */
export function withReactionTypes<T extends { reaction_type?: unknown }>(
  items: readonly T[],
  dialect: Dialect,
): readonly T[] {
  if (dialect === 'spec' || !items.some((r) => r.reaction_type === EXTRA_EMOJI_TYPE)) return items;
  return items.map((r) =>
    r.reaction_type === EXTRA_EMOJI_TYPE ? { ...r, reaction_type: EXTRA_EMOJI_TYPE_REFERENCE } : r,
  );
}

// ---- emoji sets --------------------------------------------------------------------------------

const EMOJISET_TO_REFERENCE: Readonly<Record<string, string>> = {
  vendora: 'google',
  'vendora-blob': 'google-blob',
  vendorb: 'twitter',
};
const EMOJISET_FROM_REFERENCE: Readonly<Record<string, string>> = {
  google: 'vendora',
  'google-blob': 'vendora-blob',
  twitter: 'vendorb',
};

/** An emoji-set value as a client sent it, in the stored (spec) spelling. */
export function emojisetIn(value: string): string {
  return EMOJISET_FROM_REFERENCE[value] ?? value;
}

/** A stored emoji-set value as `dialect` spells it. */
export function emojisetOut(value: string, dialect: Dialect): string {
  return dialect === 'reference' ? (EMOJISET_TO_REFERENCE[value] ?? value) : value;
}

/** The names the reference shows for its emoji sets (`emojiset_choices[].text`). */
const EMOJISET_TEXT_REFERENCE: Readonly<Record<string, string>> = {
  google: 'Google',
  'google-blob': 'Google blobs',
  twitter: 'Twitter',
};

/** `emojiset_choices` as `dialect` spells it, from the stored (spec) list. */
export function emojisetChoicesFor<C extends { key: string; text: string }>(
  choices: readonly C[],
  dialect: Dialect,
): readonly { key: string; text: string }[] {
  if (dialect === 'spec') return choices;
  return choices.map((c) => {
    const key = emojisetOut(c.key, dialect);
    return { key, text: EMOJISET_TEXT_REFERENCE[key] ?? c.text };
  });
}
