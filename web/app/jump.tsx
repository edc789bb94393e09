/**
 * Ctrl+K (and "Browse channels" beside "Channels"): jump anywhere by name — views, channels
 * (joining one not subscribed), topics of the channels opened so far, people (a direct
 * conversation), a new channel (the "Create channel" dialog, with the name typed if no channel
 * has it), or a full-text search for the words.
 */
import { useLayoutEffect, useRef } from 'preact/hooks';
import { namedById, rank } from '../state/autocomplete.js';
import {
  ALL,
  channelNarrow,
  dmNarrow,
  isNarrow,
  searchNarrow,
  topicNarrow,
  type Narrow,
} from '../state/narrow.js';
import { Avatar, Swatch } from './bits.js';
import type { Controller } from './controller.js';
import { Icon } from './icons.js';
import { moveActive } from './listbox.js';
import { useLive } from './live.js';
import { track } from './track.js';

type Item = {
  key: string;
  label: string;
  detail?: string;
  icon: preact.ComponentChild;
  run: () => void;
};

/** `initial`: what was typed before its code had loaded (shell.tsx), kept as the query. */
export function Jump({ c, initial = '' }: { c: Controller; initial?: string }) {
  const s = c.state.value!;
  // What is offered follows the organization while it is open, as the sidebar does: people muted
  // (or unmuted, or joining, leaving), channels made, renamed, joined or left, topics seen, and
  // whether the user may create channels.
  track(s.rev.users, s.rev.muted, s.rev.channels, s.rev.topics, s.rev.settings);
  // The keys act on what was typed and chosen until now, not on the last drawing (Enter pressed
  // right after typing, before the redraw).
  const [q, setQ, qNow] = useLive(initial);
  const [active, setActive, activeNow] = useLive(0);
  const input = useRef<HTMLInputElement>(null);
  // Focused as the dialog is drawn, not after the next paint (useEffect): the drawing follows
  // Ctrl+K in the same task (web/state/schedule.ts: the user's input is drawn at once), so the
  // keys typed right after it come to the field, none to the page or the compose box.
  useLayoutEffect(() => {
    const el = input.current;
    el?.focus();
    el?.setSelectionRange(initial.length, initial.length);
  }, []);

  const close = () => (c.dialog.value = null);
  const go = (n: Narrow) => () => {
    close();
    c.go(n);
  };
  const itemsFor = (q: string): Item[] => {
    const items: Item[] = [];
    const views: [string, Narrow, Parameters<typeof Icon>[0]['name']][] = [
      ['All messages', ALL, 'feed'],
      ['Mentions', isNarrow('mentioned'), 'at'],
      ['Direct messages', isNarrow('dm'), 'dm'],
      ['Starred messages', isNarrow('starred'), 'star'],
    ];
    for (const [label, n, icon] of rank(views, q, (v) => v[0], 4)) {
      items.push({ key: `v:${label}`, label, icon: <Icon name={icon} />, run: go(n) });
    }
    // The Inbox and Recent conversations: views of their own (#inbox, #recent), not narrows.
    const pages = [
      ['Inbox', 'inbox'],
      ['Recent conversations', 'recent'],
    ] as const;
    for (const [label, page] of rank(pages, q, (v) => v[0], 2)) {
      items.push({
        key: `v:${page}`,
        label,
        icon: <Icon name={page} />,
        run: () => {
          close();
          location.hash = `#${page}`;
        },
      });
    }
    for (const ch of rank([...s.channels.values()], q, (x) => x.name, q ? 8 : 6)) {
      const sub = s.subs.get(ch.stream_id);
      items.push({
        key: `c:${ch.stream_id}`,
        label: ch.name,
        detail: sub ? undefined : 'Not subscribed: join',
        icon: <Swatch color={sub?.color ?? '#9aa0ad'} privateChannel={ch.invite_only} />,
        run: sub
          ? go(channelNarrow(ch.stream_id))
          : () => {
              close();
              c.client
                .subscribe([ch.name])
                .then(() => c.go(channelNarrow(ch.stream_id)))
                .catch((e: unknown) => c.toast(e instanceof Error ? e.message : String(e)));
            },
      });
    }
    const mayCreate = s.creatableChannels().length > 0;
    if (!q && mayCreate)
      items.push({
        key: 'create-channel',
        label: 'Create a channel…',
        icon: <Icon name="plus" />,
        run: () => c.openCreateChannel(),
      });
    if (q) {
      const topics = [...s.topics.entries()].flatMap(([id, ts]) =>
        ts.map((t) => ({ id, name: t.name })),
      );
      for (const t of rank(topics, q, (x) => x.name, 5)) {
        items.push({
          key: `t:${t.id}:${t.name}`,
          label: s.topicName(t.name),
          detail: `#${s.channelName(t.id)}`,
          icon: <Icon name="hash" />,
          run: go(topicNarrow(t.id, t.name)),
        });
      }
      // The muted only when named exactly (`Name|id`), as the recipient suggestions offer them.
      const active = [...s.users.values()].filter((u) => u.is_active !== false);
      const named = namedById(q, active);
      const people = named ? [named] : active.filter((u) => !s.mutedUsers.has(u.user_id));
      for (const u of named ? people : rank(people, q, (x) => x.full_name, 6)) {
        items.push({
          key: `u:${u.user_id}`,
          label: u.full_name,
          detail: u.email,
          icon: <Avatar small id={u.user_id} name={u.full_name} url={u.avatar_url} />,
          run: go(dmNarrow([u.user_id], s.selfId)),
        });
      }
      // A name no channel has: a new channel (if the organization lets the user create any).
      const name = q.trim();
      const taken = [...s.channels.values()].some(
        (ch) => ch.name.toLowerCase() === name.toLowerCase(),
      );
      if (name && !taken && mayCreate && !named)
        items.push({
          key: 'new-channel',
          label: `Create channel #${name}`,
          icon: <Icon name="plus" />,
          // The "Create channel" dialog, the name filled in (its description, privacy, people).
          run: () => c.openCreateChannel(name),
        });
      items.push({
        key: 'search',
        label: `Search messages for “${q}”`,
        icon: <Icon name="search" />,
        run: go(searchNarrow(ALL, q)),
      });
    }
    return items;
  };
  const items = itemsFor(q);
  const at = Math.min(active, items.length - 1);

  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div class="dialog jump" role="dialog" aria-modal="true" aria-label="Jump to">
        <input
          ref={input}
          class="field"
          role="combobox"
          aria-expanded="true"
          aria-controls="jump-options"
          aria-activedescendant={items.length ? `jump-${at}` : undefined}
          aria-label="Jump to a channel, topic, person or search"
          placeholder="Jump to a channel, topic or person…"
          value={q}
          onInput={(e) => {
            setQ(e.currentTarget.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            const items = itemsFor(qNow.current);
            if (moveActive(e, items.length, setActive)) return;
            if (e.key === 'Enter') {
              e.preventDefault();
              items[Math.min(activeNow.current, items.length - 1)]?.run();
            }
          }}
        />
        <ul id="jump-options" role="listbox" aria-label="Results">
          {items.map((it, i) => (
            <li
              key={it.key}
              id={`jump-${i}`}
              class="option"
              role="option"
              aria-selected={i === at}
              onMouseDown={(e) => e.preventDefault()}
              onClick={it.run}
              onMouseEnter={() => setActive(i)}
            >
              {it.icon}
              <span>{it.label}</span>
              {it.detail && <span class="detail">{it.detail}</span>}
            </li>
          ))}
          {items.length === 0 && <li class="option">Nothing matches.</li>}
        </ul>
      </div>
    </div>
  );
}

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
