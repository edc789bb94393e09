/**
 * The sidebar's Drafts and Scheduled messages entries, with their counts: part of the first
 * screen, while their views (scheduled.tsx) load when first opened (lazy.tsx).
 */
import { sidebarCount } from '../state/scheduled-store.js';
import { Count } from './bits.js';
import type { Controller, Page } from './controller.js';
import { Icon, type IconName } from './icons.js';
import { track } from './track.js';

function PageEntry({
  c,
  page,
  icon,
  label,
  count,
  counted,
}: {
  c: Controller;
  page: Page;
  icon: IconName;
  label: string;
  count: number | null;
  counted: string;
}) {
  return (
    <li>
      <a
        class="nav-item"
        href={`#${page}`}
        aria-current={c.page.value === page ? 'page' : undefined}
      >
        <Icon name={icon} />
        <span class="label">{label}</span>
        {count !== null && <Count n={count} muted label={counted} />}
      </a>
    </li>
  );
}

/** The sidebar's Drafts and Scheduled messages, with their counts (none at zero). */
export function PageEntries({ c }: { c: Controller }) {
  track(c.scheduled.rev);
  if (c.drafts) track(c.drafts.rev);
  const drafts = sidebarCount(c.drafts?.size ?? 0);
  const scheduled = sidebarCount(c.scheduled.size);
  return (
    <>
      <PageEntry
        c={c}
        page="drafts"
        icon="draft"
        label="Drafts"
        count={drafts}
        counted={`${drafts} draft${drafts === 1 ? '' : 's'}`}
      />
      <PageEntry
        c={c}
        page="scheduled"
        icon="clock"
        label="Scheduled messages"
        count={scheduled}
        counted={`${scheduled} scheduled message${scheduled === 1 ? '' : 's'}`}
      />
    </>
  );
}
