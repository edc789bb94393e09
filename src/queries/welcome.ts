/**
 * Renders the Welcome Bot's message (src/lib/welcome.ts) in both wordings for a realm, before the
 * realm actor creates an account: POST /users, accepting an invitation (with its custom text),
 * the admin tool's create-user, a new realm's owner. Also its answers to direct messages
 * (src/endpoints/messages.ts).
 */
import { preparedContent, type PreparedContent } from '../lib/message-content.js';
import { welcomeBotReply, welcomeText, type PreparedWelcome } from '../lib/welcome.js';
import type { ReadStore } from '../storage/store.js';
import type { RenderPool } from '../../workers/pool.js';
import type { RealmView } from './realm-view.js';
import { renderContextFor } from './render-context.js';

export type WelcomeDeps = {
  config: Parameters<typeof renderContextFor>[0];
  store: ReadStore;
  renderer: RenderPool;
};

export async function prepareWelcome(
  deps: WelcomeDeps,
  view: RealmView,
  customText: string | null = null,
): Promise<PreparedWelcome> {
  const context = renderContextFor(deps.config, deps.store, view);
  const custom = customText !== null && customText.trim() !== '' ? customText : null;
  const [member, admin, extra] = await Promise.all(
    [welcomeText(false), welcomeText(true), ...(custom === null ? [] : [custom])].map(
      async (text) => preparedContent(text, await deps.renderer.render(text, context, {})),
    ),
  );
  return { member: member!, admin: admin!, ...(extra ? { custom: extra } : {}) };
}

/** The Welcome Bot's answer to a direct message's content (welcomeBotReply), rendered. */
export async function prepareWelcomeReply(
  deps: WelcomeDeps,
  view: RealmView,
  said: string,
): Promise<PreparedContent> {
  const text = welcomeBotReply(said);
  return preparedContent(
    text,
    await deps.renderer.render(text, renderContextFor(deps.config, deps.store, view), {}),
  );
}
