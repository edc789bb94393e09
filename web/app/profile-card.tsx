/**
 * A person's profile card, as the reference's user card popover: opened from a message's sender
 * (the name, the avatar, `u` on a selected message) or a mention of them in a message, it shows
 * their avatar, name (and pronouns), e-mail, role (or "Bot" and the bot's owner), a deactivated
 * account, their local time, their custom profile fields shown in the summary (all of them with
 * "View full profile"), and offers "Send direct message" (with oneself on one's own card) and "View
 * messages sent". Beside what opened it on a wide screen; a sheet at the bottom on a phone. Esc,
 * a click outside or Close shut it and the focus goes back where it was; Tab stays within it.
 *
 * A user group's card (from a group mention in a message), as the reference's user group popover:
 * the group's name, description, how many are in it, its subgroups and members by name, each
 * member's name opening their profile card (in its place, beside the same mention).
 */
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { presenceText } from '../state/presence.js';
import { groupCard, profileCard } from '../state/profile.js';
import { cardFields, type ExternalKinds, type FieldShown } from '../state/profile-fields.js';
import { canMute } from '../state/muted-users.js';
import { NO_STATUS } from '../state/user-status.js';
import { Avatar, CloseButton } from './bits.js';
import { box as boxOf, type CardAt, type Controller } from './controller.js';
import { wrapTab } from './focus-back.js';
import { Icon } from './icons.js';
import { PresenceDot } from './people.js';
import { StatusEmoji, StatusLine } from './status-emoji.js';
import { track } from './track.js';

/** Under this width the card is a sheet at the bottom of the screen (app.css says the same). */
const SHEET_QUERY = '(max-width: 600px)';
const GAP = 6;
const MARGIN = 8;

export function ProfileCard({ c }: { c: Controller }) {
  const at = c.card.value;
  if (!at) return null;
  // Keyed: another person's card (a bot's owner, from the bot's; a group's member, from the
  // group's) is a new card, focused anew.
  return 'groupId' in at ? (
    <GroupCard key={`g${at.groupId}`} c={c} at={at} groupId={at.groupId} />
  ) : (
    <Card key={at.userId} c={c} at={at} userId={at.userId} />
  );
}

/** How the card goes: back where the focus was, or on with an action (which places it). */
type Leave = 'back' | 'compose' | 'list' | 'status';

function Card({ c, at, userId }: { c: Controller; at: CardAt; userId: number }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.settings, s.rev.presence, s.rev.muted);
  const primary = useRef<HTMLButtonElement>(null);
  const leave = useRef<Leave>('back');
  const card = profileCard(userId, {
    users: s.users,
    selfId: s.selfId,
    nowMs: Date.now(),
    twentyFour: s.settings.twenty_four_hour_time === true,
  });
  const close = (how: Leave = 'back') => {
    leave.current = how;
    c.card.value = null;
  };
  // The summary fields, or all of them once "View full profile" is pressed (the reference's
  // full profile shows every field the person filled in).
  const [all, setAll] = useState(false);
  const u = s.users.get(userId);
  const custom =
    card && u && !card.isBot
      ? cardFields(u, s.profileFields, {
          all,
          kinds: s.realm.settings.realm_default_external_accounts as ExternalKinds | undefined,
        })
      : null;

  const nameId = `card-name-${userId}`;
  // Someone the app does not know yet: the people are still loading (GET /users, after the first
  // screen), and the card fills in when they come; or not someone it will know.
  const name = card?.name ?? s.userName(userId);
  // Presence as the people list and the Inbox show it (a bot, a deactivated account: none), in
  // words too, as the reference's card says it. An organization that turned presence off: the
  // circle as everywhere else (offline, but for one's own), without the words, which would say
  // what is not known ("Not active in the last year", the reference's, is not so).
  const presence = card && !card.isBot && !card.deactivated ? s.presenceOf(userId) : null;
  const presenceWords = presence && !s.realm.presenceDisabled ? presence : null;
  return (
    <CardFrame
      c={c}
      at={at}
      class="profile-card"
      labelledBy={nameId}
      leave={leave}
      primary={primary}
      filled={card !== undefined}
      grown={all}
    >
      <div class="card-head">
        <span class="with-dot">
          <Avatar large id={userId} name={name} url={card?.avatarUrl} />
          {presence && <PresenceDot status={presence} />}
        </span>
        <div class="card-who">
          <h2 id={nameId} class="card-name">
            {name}
            {custom?.pronouns && <span class="card-pronouns"> {custom.pronouns}</span>}
            {card?.isMe && <span class="card-you"> (you)</span>}
            <StatusEmoji s={s} id={userId} />
          </h2>
          {card && <p class="card-email">{card.email}</p>}
          {presenceWords && (
            <p class={`card-presence ${presenceWords}`}>
              {presenceText(presenceWords, s.presence.lastActive(userId), Date.now())}
            </p>
          )}
        </div>
        <CloseButton class="card-close" onClick={() => close()} />
      </div>
      {card && <StatusLine s={s} id={userId} />}
      {!card && (
        <p class="card-pending" role="status">
          {s.usersComplete ? 'Not someone this organization knows.' : 'Loading…'}
        </p>
      )}
      {card && (
        <dl class="card-facts">
          <div>
            <dt>Role</dt>
            <dd>{card.role}</dd>
          </div>
          {card.isBot && card.botOwner && (
            <div>
              <dt>Owner</dt>
              <dd>
                <button
                  class="link-btn"
                  type="button"
                  onClick={() =>
                    (c.card.value = { userId: card.botOwner!.id, anchor: at.anchor, from: at.from })
                  }
                >
                  {card.botOwner.name}
                </button>
              </dd>
            </div>
          )}
          {card.localTime !== undefined && (
            <div>
              <dt>Local time</dt>
              <dd>{card.localTime}</dd>
            </div>
          )}
          {custom?.fields.map((f) => (
            <div key={`f${f.id}`} class="card-field" data-field-id={f.id}>
              <dt>{f.name}</dt>
              <dd>
                <FieldValue
                  f={f}
                  name={(id) => s.userName(id)}
                  open={(id) => (c.card.value = { userId: id, anchor: at.anchor, from: at.from })}
                />
              </dd>
            </div>
          ))}
        </dl>
      )}
      {custom && (custom.more || all) && (
        <button
          class="link-btn card-more"
          type="button"
          aria-expanded={all}
          onClick={() => setAll(!all)}
        >
          {all ? 'Show fewer details' : 'View full profile'}
        </button>
      )}
      {card?.deactivated && (
        <p class="card-deactivated">
          {card.isBot ? 'This bot has been deactivated.' : 'This user has been deactivated.'}
        </p>
      )}
      <div class="card-actions">
        {card?.isMe && (
          <button
            key="status"
            class="btn"
            type="button"
            onClick={() => {
              close('status');
              c.dialog.value = { kind: 'status' };
            }}
          >
            <Icon name="smile" />
            {s.statuses.get(s.selfId) === NO_STATUS ? 'Set status' : 'Edit status'}
          </button>
        )}
        {card?.canMessage && (
          <button
            key="dm"
            ref={primary}
            class="btn primary"
            type="button"
            onClick={() => {
              close('compose');
              c.messagePerson(userId);
            }}
          >
            <Icon name="dm" />
            Send direct message
          </button>
        )}
        <button
          key="sent"
          class="btn"
          type="button"
          onClick={() => {
            close('list');
            c.viewSentBy(userId);
          }}
        >
          <Icon name="send" />
          View messages sent
        </button>
        {card && canMute(s.selfId, userId) && (
          <button
            key="mute"
            class="btn"
            type="button"
            onClick={() => {
              const mute = !s.mutedUsers.has(userId);
              close();
              void c.setUserMuted(userId, mute);
            }}
          >
            <Icon name={s.mutedUsers.has(userId) ? 'bell' : 'bell-off'} />
            {s.mutedUsers.has(userId) ? 'Unmute this user' : 'Mute this user'}
          </button>
        )}
      </div>
    </CardFrame>
  );
}

/** A custom profile field's value on the card: text, rendered markdown, a link, people. */
function FieldValue({
  f,
  name,
  open,
}: {
  f: FieldShown;
  name: (id: number) => string;
  open: (id: number) => void;
}) {
  switch (f.kind) {
    case 'text':
      return <span class="card-field-text">{f.text}</span>;
    case 'html':
      // The server's rendering of the person's markdown, as a message's content is.
      return <div class="card-field-html rendered" dangerouslySetInnerHTML={{ __html: f.html }} />;
    case 'link':
      return (
        <a href={f.href} target="_blank" rel="noopener noreferrer">
          {f.text}
        </a>
      );
    case 'people':
      return (
        <span class="card-field-people">
          {f.ids.map((id, i) => (
            <span key={id}>
              {i > 0 && ', '}
              <button
                class="link-btn"
                type="button"
                aria-haspopup="dialog"
                onClick={() => open(id)}
              >
                {name(id)}
              </button>
            </span>
          ))}
        </span>
      );
  }
}

/**
 * What both cards are: a dialog beside what opened it (a sheet on a phone), focused on its first
 * action as it is drawn, Tab kept within it, shut by Esc or a click outside, the focus then back
 * where it was (unless an action took it on: `leave`).
 */
function CardFrame({
  c,
  at,
  class: cls,
  labelledBy,
  leave,
  primary,
  filled,
  grown,
  children,
}: {
  c: Controller;
  at: CardAt;
  class: string;
  labelledBy: string;
  leave: RefObject<Leave>;
  primary: RefObject<HTMLElement | null>;
  /** Whether it shows what it is about (else "Loading…"): placed again when it fills in. */
  filled: boolean;
  /** Whether it shows more (the full profile): placed again too, as it grew. */
  grown?: boolean;
  children: ComponentChildren;
}) {
  const box = useRef<HTMLDivElement>(null);
  const sheet = isSheet();
  const [, redraw] = useState(0);

  // Beside what opened it, before it is painted; again when it fills in (the people loaded) or
  // grows (the full profile), and when it turns from a sheet into a card (the window widened). A
  // sheet is placed by its style.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (sheet) el.style.left = el.style.top = '';
    else place(el, anchorOf(at));
  }, [filled, grown, sheet]);
  // The window resized: placed again beside what opened it, where that is now (as the
  // reference's popovers follow their element); a sheet on a narrow window, a card on a wide one.
  useEffect(() => {
    const resized = () => {
      if (isSheet() !== sheet) redraw((n) => n + 1);
      else if (!sheet && box.current) place(box.current, anchorOf(at));
    };
    window.addEventListener('resize', resized);
    return () => window.removeEventListener('resize', resized);
  }, [at, sheet]);
  // Focused as it is drawn (in the task of the click or key that opened it), so that a key
  // pressed at once acts in it. The focus goes back as it closes, unless an action took it on
  // (the compose box, the messages of the new view).
  useLayoutEffect(() => {
    const el = box.current;
    const before = document.activeElement as HTMLElement | null;
    (
      primary.current ??
      el?.querySelector<HTMLElement>('.card-actions button') ??
      el?.querySelector<HTMLElement>('button')
    )?.focus({ preventScroll: true });
    return () => {
      const now = document.activeElement;
      const inside = !now || now === document.body || !!el?.contains(now);
      // The status dialog takes the focus itself, and gives it back to what had it before.
      if (leave.current === 'compose' || leave.current === 'status' || !inside) return;
      const list = document.querySelector<HTMLElement>('.messages');
      const to =
        leave.current === 'back' && before && before.isConnected && before !== document.body
          ? before
          : list;
      to?.focus({ preventScroll: true });
    };
  }, []);

  const close = () => {
    leave.current = 'back';
    c.card.value = null;
  };
  const keys = (e: KeyboardEvent) => {
    // Nothing behind it hears its keys (the app's shortcuts: r, n, c, Esc elsewhere).
    e.stopPropagation();
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else {
      wrapTab(box.current, e);
    }
  };

  return (
    <div
      class={sheet ? 'overlay card-overlay sheet' : 'overlay card-overlay'}
      onMouseDown={(e) => {
        if (e.target !== e.currentTarget) return;
        // Not the browser's own focus change (to the page, once the card has given it back).
        e.preventDefault();
        close();
      }}
    >
      <div
        ref={box}
        class={sheet ? `popup ${cls} sheet` : `popup ${cls}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={labelledBy}
        onKeyDown={keys}
      >
        {children}
      </div>
    </div>
  );
}

/** A user group's card: its name, description, size, subgroups and members. */
function GroupCard({ c, at, groupId }: { c: Controller; at: CardAt; groupId: number }) {
  const s = c.state.value!;
  track(s.rev.users);
  const first = useRef<HTMLButtonElement>(null);
  const leave = useRef<Leave>('back');
  const card = groupCard(groupId, {
    groups: s.groups,
    users: s.users,
    name: (id) => s.userName(id),
  });
  const nameId = `group-card-name-${groupId}`;
  const close = () => {
    leave.current = 'back';
    c.card.value = null;
  };
  const empty = !card || (card.members.length === 0 && card.subgroups.length === 0);
  return (
    <CardFrame
      c={c}
      at={at}
      class="profile-card group-card"
      labelledBy={nameId}
      leave={leave}
      primary={first}
      filled={card !== undefined}
    >
      <div class="card-head">
        <span class="group-icon" aria-hidden="true">
          <Icon name="group" />
        </span>
        <div class="card-who">
          <h2 id={nameId} class="card-name">
            {card?.name ?? 'Unknown group'}
          </h2>
          {card?.description && <p class="card-email group-description">{card.description}</p>}
        </div>
        <CloseButton class="card-close" onClick={close} />
      </div>
      {card && !empty && (
        <p class="group-count">{card.count === 1 ? '1 member' : `${card.count} members`}</p>
      )}
      {card?.deactivated && <p class="card-deactivated">This group has been deactivated.</p>}
      {empty ? (
        <p class="card-pending">
          {card ? 'This group has no members.' : 'Not a group this organization knows.'}
        </p>
      ) : (
        <ul class="group-members" aria-label="Members">
          {card.subgroups.map((g) => (
            <li key={`g${g.id}`} class="group-subgroup">
              <Icon name="group" />
              {g.name}
            </li>
          ))}
          {card.members.map((m, i) => (
            <li key={m.id}>
              <button
                ref={i === 0 ? first : undefined}
                class="link-btn"
                type="button"
                aria-haspopup="dialog"
                onClick={() => (c.card.value = { userId: m.id, anchor: at.anchor, from: at.from })}
              >
                {m.name}
              </button>
              {m.isBot && <span class="group-bot"> (bot)</span>}
            </li>
          ))}
        </ul>
      )}
    </CardFrame>
  );
}

/** Whether the card is a sheet at the bottom of the screen (a narrow window), or beside. */
function isSheet(): boolean {
  return typeof matchMedia === 'function' && matchMedia(SHEET_QUERY).matches;
}

/** Where what opened a card is now: its box while it is in the page, else where it was. */
function anchorOf(at: CardAt): CardAt['anchor'] {
  return at.from?.isConnected ? boxOf(at.from) : at.anchor;
}

/**
 * The card under what opened it, its left edge at that one's (over it where there is no room
 * below), within the window.
 */
function place(el: HTMLElement, anchor: CardAt['anchor']): void {
  const w = el.offsetWidth;
  const h = el.offsetHeight;
  const vw = window.innerWidth;
  const vh = window.innerHeight;
  let left: number;
  let top: number;
  if (anchor) {
    left = anchor.left;
    top = anchor.bottom + GAP;
    if (top + h > vh - MARGIN && anchor.top - GAP - h >= MARGIN) top = anchor.top - GAP - h;
  } else {
    left = (vw - w) / 2;
    top = vh * 0.15;
  }
  left = Math.max(MARGIN, Math.min(left, vw - w - MARGIN));
  top = Math.max(MARGIN, Math.min(top, vh - h - MARGIN));
  el.style.left = `${Math.round(left)}px`;
  el.style.top = `${Math.round(top)}px`;
}
