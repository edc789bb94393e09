/**
 * Fetching a narrow's messages into its list (`GET /messages`): the first screen opens at the
 * first unread message (or at the message a link points to, or the newest), and the view asks
 * for older or newer pages when its window reaches an end of the run that is not the end of the
 * narrow. One fetch per direction at a time. Answers that come after the view moved on are
 * dropped: a first fetch's when another was asked for after it (the last asked counts, whichever
 * answer comes first), a page's when the run it borders was replaced meanwhile. Otherwise an
 * answer (a first fetch's or a page's) is taken with what the events did while it was on its
 * way: messages that arrived join it, messages deleted or moved away stay out (MessageList), and
 * the fetched copies get the edits, moves, reactions and flags made meanwhile (ChatState). When
 * more came than is kept for it (either), the fetch is made again, its answer not taken; so it is
 * when the user's muting changed meanwhile, for the combined feed (fetched as `in:home`: its
 * answer may hold what is muted now, or lack what no longer is). A fetch that fails is
 * kept on the list (shown with a retry), and the messages that arrived while it was on its way
 * join the list shown (MessageList.fetchFailed). The fetch function is injected (the typed
 * client in the app, a fake in tests).
 */
import type { GetMessages } from '../../src/client/api.js';
import type { MessagesResponse } from '../../src/client/types.js';
import type { ChatState } from './chat.js';
import { STEP, type MessageList } from './message-list.js';
import { apiNarrow, mutingApplies } from './narrow.js';

export type FetchMessages = (q: GetMessages) => Promise<MessagesResponse>;

/** Messages asked for on each side of the anchor on the first fetch. */
export const FIRST_BEFORE = 100;
export const FIRST_AFTER = 100;

export class Loader {
  /** Every fetch made, for tests and the bench ("no fetch of a narrow not shown"). */
  fetches = 0;

  constructor(
    private readonly state: ChatState,
    private readonly fetchMessages: FetchMessages,
  ) {}

  /**
   * GET /messages for `list`, asked again while the answer is still `wanted` and more came during
   * it than is kept for it: edits, moves, reactions and flags (ChatState: its copies could lack
   * one it dropped), or arrivals and deletions (MessageList: it could hold a message deleted
   * meanwhile, or lack one that arrived), or, for a narrow muting applies to, the muting changed
   * (the server's answer follows the muting it had then). The narrow is the list's, as the
   * server takes it with the muting of each ask (a channel's view names its muted topics).
   */
  private async fetch(
    list: MessageList,
    q: Omit<GetMessages, 'narrow'>,
    wanted: () => boolean,
  ): Promise<MessagesResponse> {
    for (;;) {
      const mark = this.state.changeMark();
      const held = list.holdMark();
      const muting = this.state.mutingMark();
      this.fetches++;
      const narrow = apiNarrow(list.narrow, this.state);
      const r = await this.fetchMessages({ ...q, narrow });
      if (!wanted()) return r;
      const mutingChanged = mutingApplies(list.narrow) && this.state.mutingChangedSince(muting);
      if (!this.state.changesLostSince(mark) && !list.heldLostSince(held) && !mutingChanged)
        return r;
    }
  }

  /**
   * The first fetch of a list (or again, when stale or after a failure). `anchor`: a message
   * id (a `near` link), or where unread reading starts.
   */
  async open(list: MessageList, anchor: number | 'first_unread' | 'newest'): Promise<void> {
    if (list.loaded && !list.stale && anchor === 'first_unread') return;
    if (list.loaded && !list.stale && typeof anchor === 'number' && list.has(anchor)) {
      list.windowAround(anchor);
      return;
    }
    const asked = ++list.opens;
    list.error = null;
    this.state.fetchStarting();
    list.startLoading();
    let r: MessagesResponse;
    try {
      r = await this.fetch(
        list,
        {
          anchor,
          num_before: FIRST_BEFORE,
          num_after: FIRST_AFTER,
        },
        () => asked === list.opens,
      );
    } catch (e) {
      if (asked !== list.opens) return;
      list.error = e instanceof Error ? e.message : String(e);
      list.fetchFailed(null);
      return;
    }
    if (asked !== list.opens) return;
    list.loading = false;
    const movedOut = this.state.ingest(r.messages, list.narrow);
    const ids = r.messages.map((m) => m.id).filter((id) => !movedOut.has(id));
    let at: number | null = typeof anchor === 'number' ? anchor : null;
    if (anchor === 'first_unread') {
      const firstUnread = r.messages.find((m) => !(m.flags ?? []).includes('read'));
      at = firstUnread ? firstUnread.id : null;
    }
    list.setInitial(ids, r.found_oldest, r.found_newest, at);
    list.keepHighlights(r.messages);
  }

  /** The page above the run (when the window is at its top and the narrow goes further). */
  async older(list: MessageList): Promise<void> {
    if (list.loadingOlder || list.foundOldest || !list.loaded || list.ids.length === 0) return;
    this.state.fetchStarting();
    list.startPage('older');
    list.rev.value++;
    const run = list.run;
    try {
      const r = await this.fetch(
        list,
        {
          anchor: list.ids[0]!,
          num_before: STEP,
          num_after: 0,
          include_anchor: false,
        },
        () => list.loaded && list.run === run,
      );
      if (!list.loaded || list.run !== run) return;
      const movedOut = this.state.ingest(r.messages, list.narrow);
      list.prepend(
        r.messages.map((m) => m.id).filter((id) => !movedOut.has(id)),
        r.found_oldest,
      );
      list.keepHighlights(r.messages);
    } catch (e) {
      if (list.run === run) list.error = e instanceof Error ? e.message : String(e);
      list.fetchFailed('older');
    } finally {
      list.loadingOlder = false;
      list.rev.value++;
    }
  }

  async newer(list: MessageList): Promise<void> {
    if (list.loadingNewer || list.foundNewest || !list.loaded || list.ids.length === 0) return;
    this.state.fetchStarting();
    list.startPage('newer');
    list.rev.value++;
    const run = list.run;
    try {
      const r = await this.fetch(
        list,
        {
          anchor: list.ids[list.ids.length - 1]!,
          num_before: 0,
          num_after: STEP,
          include_anchor: false,
        },
        () => list.loaded && list.run === run,
      );
      if (!list.loaded || list.run !== run) return;
      const movedOut = this.state.ingest(r.messages, list.narrow);
      list.append(
        r.messages.map((m) => m.id).filter((id) => !movedOut.has(id)),
        r.found_newest,
      );
      list.keepHighlights(r.messages);
    } catch (e) {
      if (list.run === run) list.error = e instanceof Error ? e.message : String(e);
      list.fetchFailed('newer');
    } finally {
      list.loadingNewer = false;
      list.rev.value++;
    }
  }
}
