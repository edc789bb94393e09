/**
 * A registered event queue read without blocking: each `drain` returns what arrived since the
 * previous one (everything an answered request caused is already there) and acknowledges it.
 */
import type { Test } from 'tap';
import { assertSuccess, type ApiClient, type Params } from './api.js';
import { register, type Ev } from './events.js';
import { assertMatchesOpenApi } from './openapi.js';

export class Listener {
  private last = -1;
  /** Everything received so far. */
  readonly got: Ev[] = [];

  private constructor(
    private readonly api: ApiClient,
    readonly who: string,
    readonly queueId: string,
    /** The register snapshot taken with the queue. */
    readonly snapshot: Record<string, unknown>,
    private readonly allowExtra: readonly string[],
  ) {}

  static async open(
    t: Test,
    api: ApiClient,
    who: string,
    params: Params = {},
    opts: { allowExtra?: readonly string[] } = {},
  ): Promise<Listener> {
    const q = await register(t, api, who, params);
    return new Listener(api, who, q.queue_id, q.body, opts.allowExtra ?? []);
  }

  async drain(t: Test): Promise<Ev[]> {
    const res = await this.api.get(this.who, 'events', {
      queue_id: this.queueId,
      last_event_id: this.last,
      dont_block: true,
    });
    const body = assertSuccess(t, res, `GET /events for ${this.who}`);
    assertMatchesOpenApi(t, '/events', 'get', body, { allowExtra: this.allowExtra });
    const evs = body.events as Ev[];
    if (evs.length > 0) this.last = evs[evs.length - 1]!.id;
    this.got.push(...evs);
    return evs;
  }
}

/** `type op property` of an event, for compact comparisons. */
export const kind = (e: Ev): string =>
  [e.type, e.op, e.property ?? e.setting_name ?? e.notification_name]
    .filter((x) => typeof x === 'string')
    .join(' ');
