/**
 * Recent conversations' entry in the sidebar: part of the first load, while the view itself
 * (recent.tsx) loads when first shown (lazy-recent.ts).
 */
import { Count } from './bits.js';
import type { Controller } from './controller.js';
import { Icon } from './icons.js';

/**
 * The sidebar's entry, with the unread count when Recent conversations is the home view
 * (sidebar.tsx, viewEntries).
 */
export function RecentEntry({ c, count = 0 }: { c: Controller; count?: number }) {
  return (
    <li>
      <a
        class="nav-item"
        href="#recent"
        aria-current={c.page.value === 'recent' ? 'page' : undefined}
      >
        <Icon name="recent" />
        <span class="label">Recent conversations</span>
        <Count n={count} />
      </a>
    </li>
  );
}
