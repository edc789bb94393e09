/**
 * After the tree is built: every link (for has_link and the uploads a message refers to), and the
 * reference's inline image previews — a link to an image (outside quotes) gets a
 * `message_inline_image` block after its paragraph (replacing the paragraph when it held only
 * the link), with the image served through the server's /thumbnail endpoint.
 */
import type { PreparedContext } from './prepare.js';
import { El } from './tree.js';
import { uploadPathId } from './urls.js';

const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];
const PREVIEW_LIMIT = 24;
const PREVIEW_CLASSES = ['message_inline_image', 'message_inline_ref', 'inline-preview-twitter'];

type Found = { a: El; parent: El; grandparent: El | null; inQuote: boolean };

function findLinks(root: El): Found[] {
  const found: Found[] = [];
  const queue: { el: El; parent: El | null; inQuote: boolean }[] = [
    { el: root, parent: null, inQuote: false },
  ];
  while (queue.length > 0) {
    const cur = queue.shift()!;
    const inQuote = cur.inQuote || cur.el.tag === 'blockquote';
    for (const child of cur.el.children) {
      queue.push({ el: child, parent: cur.el, inQuote });
      if (child.tag === 'a' && child.attrs.href !== undefined)
        found.push({ a: child, parent: cur.el, grandparent: cur.parent, inQuote });
    }
  }
  return found;
}

function pathOf(url: string): { host: string; path: string } {
  const m = /^(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?(?:\/\/([^/?#]*))?([^?#]*)/.exec(url)!;
  return { host: (m[1] ?? '').toLowerCase(), path: m[2] ?? '' };
}

function isImage(url: string): boolean {
  if (url.startsWith('/user_uploads/') || url.startsWith('user_uploads/')) return false;
  const { host, path } = pathOf(url);
  if (host === 'pasteboard.co') return false;
  const lower = path.toLowerCase();
  return IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** GitHub "blob" pages of images → the raw image. */
function actualImageUrl(url: string): string {
  const m = /^https?:\/\/(?:[^/]+\.)?github\.com\/([^/]+)\/([^/]+)\/blob\/(.+)$/.exec(url);
  return m ? `https://raw.githubusercontent.com/${m[1]!}/${m[2]!}/${m[3]!}` : url;
}

function quotePlus(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, '+');
}

function previewDiv(imageUrl: string, link: string, title: string | null): El {
  const div = new El('div', { class: 'message_inline_image' });
  const a = div.append(new El('a', { href: link }));
  if (title !== null) a.attrs.title = title;
  const enc = quotePlus(imageUrl);
  a.append(
    new El('img', {
      'data-src-fullsize': `/thumbnail?url=${enc}&size=full`,
      src: `/thumbnail?url=${enc}&size=thumbnail`,
    }),
  );
  return div;
}

function removeChild(parent: El, child: El): void {
  const i = parent.children.indexOf(child);
  if (i >= 0) parent.children.splice(i, 1);
}

function insertionIndex(grandparent: El, parent: El): number {
  const links = new Set<string>();
  const collect = (e: El) => {
    if (e.tag === 'a' && e.attrs.href !== undefined) links.add(e.attrs.href);
    e.children.forEach(collect);
  };
  collect(parent);
  let i = grandparent.children.indexOf(parent);
  for (;;) {
    i++;
    const uncle = grandparent.children[i];
    if (!uncle) return i;
    const classes = (uncle.attrs.class ?? '').split(/\s+/);
    if (uncle.tag !== 'div' || !classes.some((c) => PREVIEW_CLASSES.includes(c))) return i;
    const uncleLink = uncle.children.find((c) => c.tag === 'a');
    if (!uncleLink || !links.has(uncleLink.attrs.href ?? '')) return i;
  }
}

export function addLinkPreviews(
  root: El,
  ctx: PreparedContext,
  previews = true,
): { hasLink: boolean; hasImage: boolean; pathIds: string[] } {
  const found = findLinks(root);
  const pathIds: string[] = [];
  for (const f of found) {
    const id = uploadPathId(ctx.realmHost, f.a.attrs.href!);
    if (id !== null && !pathIds.includes(id)) pathIds.push(id);
  }
  let hasImage = false;
  const previewable = new Set(found.filter((f) => !f.inQuote).map((f) => f.a.attrs.href!));
  if (previews && found.length > 0 && previewable.size <= PREVIEW_LIMIT) {
    const done = new Set<string>();
    for (const f of found) {
      const url = f.a.attrs.href!;
      if (!previewable.has(url) || done.has(url)) continue;
      done.add(url);
      if (!isImage(url)) continue;
      const text = f.a.text;
      const urlEqText = text === url;
      const title = urlEqText ? null : text;
      const div = previewDiv(actualImageUrl(url), url, title);
      hasImage = true;
      if (f.parent.tag === 'li') {
        f.parent.append(div);
        if (!f.parent.text && !f.a.tail && urlEqText) removeChild(f.parent, f.a);
      } else if (f.parent.tag === 'p' && f.grandparent) {
        const gp = f.grandparent;
        gp.children.splice(insertionIndex(gp, f.parent), 0, div);
        if (
          f.parent.children.length === 1 &&
          (!f.parent.text || f.parent.text === '\n') &&
          !f.a.tail &&
          urlEqText
        )
          removeChild(gp, f.parent);
      } else {
        root.append(div);
      }
    }
  }
  return { hasLink: found.length > 0, hasImage, pathIds };
}
