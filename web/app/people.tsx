/**
 * The people list (the reference's "buddy list"): the organization's active human users with a
 * presence dot, the user first, then active, idle and offline people, each by name, with a
 * filter; a click (or Enter) opens the direct messages with the person. Muted users are not
 * listed (web/state/muted-users.ts). A hundred are drawn at
 * a time ("Show 100 more", as the Users panel), so an organization of thousands stays quick. On wide screens it is a
 * column at the right; narrower, a section of the sidebar (the drawer on a phone), folded until
 * opened. The dot's meaning is in words too, for screen readers (and in its tooltip). Not shown
 * at all where the organization turned presence off (usePeopleListed).
 */
import { useComputed } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { dmNarrow, narrowHash, narrowKey } from '../state/narrow.js';
import { peopleList, STATUS_TEXT, type PresenceStatus } from '../state/presence.js';
import { PAGE_SIZE, pageOf } from '../state/pages.js';
import { Avatar } from './bits.js';
import type { Controller } from './controller.js';
import { useLastPageFocus } from './focus-back.js';
import { Icon } from './icons.js';
import { StatusEmoji } from './status-emoji.js';
import { track } from './track.js';

/** Wide enough for the people column beside the sidebar and the messages. */
export const PEOPLE_COLUMN_QUERY = '(min-width: 1100px)';

/** Whether a media query matches, kept current. */
export function useMedia(query: string): boolean {
  const [on, setOn] = useState(
    () => typeof matchMedia !== 'undefined' && matchMedia(query).matches,
  );
  useEffect(() => {
    if (typeof matchMedia === 'undefined') return;
    const mq = matchMedia(query);
    const update = () => setOn(mq.matches);
    update();
    mq.addEventListener('change', update);
    return () => mq.removeEventListener('change', update);
  }, [query]);
  return on;
}

/**
 * Whether the people list is shown: not in an organization that turned presence off, where it
 * would list everyone offline (the reference's web app hides its buddy list then, `#user-list`,
 * and draws nothing in it). Kept current by the realm's `presence_disabled` event; only a change
 * of the answer draws its caller again.
 */
export function usePeopleListed(c: Controller): boolean {
  return useComputed(() => {
    const s = c.state.value;
    if (!s) return true;
    track(s.rev.settings);
    return !s.realm.presenceDisabled;
  }).value;
}

/** A status as a dot (over an avatar's corner); its words are the caller's to give. */
export function PresenceDot({ status }: { status: PresenceStatus }) {
  return <span class={`presence-dot ${status}`} title={STATUS_TEXT[status]} aria-hidden="true" />;
}

/** An avatar with the person's presence dot on its corner. */
export function AvatarWithDot({
  id,
  name,
  url,
  status,
}: {
  id: number;
  name: string;
  url?: string | null;
  status: PresenceStatus | null;
}) {
  return (
    <span class="with-dot">
      <Avatar small id={id} name={name} url={url} />
      {status && <PresenceDot status={status} />}
    </span>
  );
}

/** The words after a name that say its dot ("…, active"). */
export function StatusWords({ status }: { status: PresenceStatus | null }) {
  return status ? <span class="sr-only">, {STATUS_TEXT[status].toLowerCase()}</span> : null;
}

/** Up and down move between the filter and the people (the list's links). */
function moveFocus(list: HTMLElement | null, from: Element | null, by: 1 | -1): boolean {
  if (!list) return false;
  const links = [...list.querySelectorAll<HTMLElement>('a.person')];
  if (!links.length) return false;
  const at = from instanceof HTMLElement ? links.indexOf(from) : -1;
  const next = at < 0 ? (by === 1 ? 0 : -1) : at + by;
  if (next < 0) {
    list.closest('.people-body')?.querySelector<HTMLElement>('.people-filter')?.focus();
    return true;
  }
  links[Math.min(next, links.length - 1)]?.focus();
  return true;
}

function PeopleBody({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.presence, s.rev.settings, s.rev.muted);
  const [filter, setFilter] = useState('');
  // A page at a time, as the Users panel: an organization of thousands is never drawn at once.
  const [shown, setShown] = useState(PAGE_SIZE);
  const list = useRef<HTMLUListElement>(null);
  const curKey = narrowKey(c.narrow.value);
  const muted = (id: number) => s.mutedUsers.has(id);
  const people = peopleList(s.users.values(), (id) => s.presenceOf(id), s.selfId, filter, muted);
  const { rows, more } = pageOf(people, shown);
  const open = (id: number) => c.go(dmNarrow([id], s.selfId));

  // The last page drawn: its button is gone, the focus goes on to the first person it added.
  const markPage = useLastPageFocus(
    more !== null,
    (at) => list.current?.querySelectorAll<HTMLElement>('a.person')[at],
  );

  return (
    <div class="people-body">
      <div class="people-search">
        <Icon name="search" />
        <input
          class="field people-filter"
          type="search"
          aria-label="Filter people"
          placeholder="Filter people"
          value={filter}
          onInput={(e) => {
            setFilter(e.currentTarget.value);
            setShown(PAGE_SIZE);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              if (moveFocus(list.current, null, 1)) e.preventDefault();
            } else if (e.key === 'Enter') {
              e.preventDefault();
              const first = peopleList(
                s.users.values(),
                (id) => s.presenceOf(id),
                s.selfId,
                e.currentTarget.value,
                muted,
              )[0];
              if (first) open(first.user_id);
            } else if (e.key === 'Escape' && e.currentTarget.value !== '') {
              // A filter first empties; the next Escape leaves the field (shell.tsx).
              e.stopPropagation();
              setFilter('');
              setShown(PAGE_SIZE);
            }
          }}
        />
      </div>
      {!s.usersComplete ? (
        <p class="people-note">Loading people…</p>
      ) : people.length === 0 ? (
        <p class="people-note">No one matches.</p>
      ) : (
        <ul
          class="nav-list people-list"
          ref={list}
          onKeyDown={(e) => {
            const by = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
            if (by && moveFocus(list.current, document.activeElement, by)) e.preventDefault();
          }}
        >
          {rows.map((p) => {
            const narrow = dmNarrow([p.user_id], s.selfId);
            // (Offline for everyone else when the organization turned presence off: presenceOf.)
            const status = s.presenceOf(p.user_id);
            const u = s.users.get(p.user_id);
            return (
              <li key={p.user_id}>
                <a
                  class="nav-item person"
                  href={narrowHash(narrow, s.names())}
                  aria-current={curKey === narrowKey(narrow) ? 'page' : undefined}
                  data-user-id={p.user_id}
                  data-status={status ?? undefined}
                  onClick={(e) => {
                    if (e.ctrlKey || e.metaKey || e.shiftKey) return;
                    e.preventDefault();
                    open(p.user_id);
                  }}
                >
                  <AvatarWithDot
                    id={p.user_id}
                    name={p.full_name}
                    url={u?.avatar_url}
                    status={status}
                  />
                  <span class="label">
                    {p.full_name}
                    {p.user_id === s.selfId && <span class="you"> (you)</span>}
                  </span>
                  <StatusEmoji s={s} id={p.user_id} words />
                  <StatusWords status={status} />
                </a>
              </li>
            );
          })}
          {more && (
            <li>
              <button
                class="nav-item more"
                type="button"
                onClick={() => {
                  markPage(rows.length);
                  setShown(rows.length + PAGE_SIZE);
                }}
              >
                {more}
              </button>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

/** The people column at the right of a wide screen. */
export function PeopleColumn({ c }: { c: Controller }) {
  return (
    <aside class="people" aria-labelledby="people-heading">
      <h2 class="nav-heading people-heading" id="people-heading">
        People
      </h2>
      <PeopleBody c={c} />
    </aside>
  );
}

/** The people as a section of the sidebar (narrower screens), folded until opened. */
export function PeopleSection({ c }: { c: Controller }) {
  const [open, setOpen] = useState(false);
  return (
    <section class="nav-section people-section" aria-labelledby="people-heading">
      <div class="nav-heading">
        <button
          class="fold"
          id="people-heading"
          type="button"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          <Icon name="chevron" />
          People
        </button>
      </div>
      {open && <PeopleBody c={c} />}
    </section>
  );
}
