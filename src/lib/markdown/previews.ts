/**
 * After the tree is built: every link (for has_link and the uploads a message refers to), and the
 * reference's inline previews of links outside quotes (at most 24 distinct links): videos
 * (`.mp4`, `.webm`) as `<video>`, images as `message_inline_image` blocks after their paragraph
 * (replacing the paragraph when it held only the link), uploaded images with their thumbnail
 * (or the loading placeholder until it is made) and original dimensions, YouTube links with the
 * video's still. External images and videos are shown through the image proxy (camo scheme),
 * so a reader's browser never contacts the third-party host.
 */
import type { RenderOptions, UploadPreview } from './context.js';
import { camoUrl } from './camo.js';
import type { PreparedContext } from './prepare.js';
import { El } from './tree.js';
import { uploadPathId } from './urls.js';

const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];
const PREVIEW_LIMIT = 24;
const PREVIEW_CLASSES = ['message_inline_image', 'message_inline_ref', 'inline-preview-twitter'];
/** The reference's spinner, shown until an uploaded image's thumbnail is made. */
export const LOADING_PLACEHOLDER_SRC = '/static/images/loading/loader-black.svg';

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

function splitUrl(url: string): { scheme: string; host: string; path: string; query: string } {
  const m = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?/.exec(url)!;
  return {
    scheme: (m[1] ?? '').toLowerCase(),
    host: (m[2] ?? '').toLowerCase(),
    path: m[3] ?? '',
    query: m[4] ?? '',
  };
}

function isImage(url: string, opts: RenderOptions): boolean {
  if (url.startsWith('/user_uploads/'))
    return opts.upload_previews?.[url.slice('/user_uploads/'.length)] !== undefined;
  const { host, path } = splitUrl(url);
  if (host === 'pasteboard.co') return false;
  const lower = path.toLowerCase();
  return IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** The formats every browser plays (the reference's guess from the URL's ending). */
function isVideo(url: string): boolean {
  return /\.(?:mp4|webm)$/i.test(url);
}

/** Wikipedia file pages and linx.li links point at the image itself. */
function correctedImageSource(url: string): string | null {
  const u = splitUrl(url);
  if (u.host.endsWith('.wikipedia.org') && u.path.startsWith('/wiki/File:'))
    return url.replace('/wiki/File:', '/wiki/Special:FilePath/File:');
  if (u.host === 'linx.li') return 'https://linx.li/s' + u.path;
  return null;
}

/** GitHub "blob" pages of images → the raw image. */
function actualImageUrl(url: string): string {
  const m = /^https?:\/\/(?:[^/]+\.)?github\.com\/([^/]+)\/([^/]+)\/blob\/(.+)$/.exec(url);
  return m ? `https://raw.githubusercontent.com/${m[1]!}/${m[2]!}/${m[3]!}` : url;
}

const YOUTUBE_HOSTS = new Set([
  'm.youtube.com',
  'www.youtube.com',
  'www.youtube-nocookie.com',
  'youtube.com',
  'youtube-nocookie.com',
]);

/** The video id of a YouTube link, as the reference finds it. */
export function youtubeId(url: string): string | null {
  const u = splitUrl(url);
  if (u.scheme !== 'http' && u.scheme !== 'https') return null;
  const host = u.host.replace(/:\d+$/, '').replace(/^[^@]*@/, '');
  let id: string | null = null;
  if (YOUTUBE_HOSTS.has(host)) {
    const q = new URLSearchParams(u.query);
    if ((u.path === '/watch' || u.path === '/watch_popup') && q.get('v')) id = q.get('v');
    else if (u.path === '/watch_videos' && q.get('video_ids'))
      id = q.get('video_ids')!.split(',')[0]!;
    else if (/^\/(?:embed|shorts|v)\//.test(u.path)) id = u.path.split('/')[2] ?? null;
  } else if (host === 'youtu.be' && u.path.startsWith('/')) {
    id = u.path.slice(1);
  }
  return id !== null && /^[0-9A-Za-z_-]+$/.test(id) ? id : null;
}

/**
 * The URL a browser loads an image or video from: through the image proxy, unless it is on
 * this server (relative, or this realm's own origin).
 */
function proxied(ctx: PreparedContext, url: string): string {
  if (!ctx.imageProxy) return url;
  const u = splitUrl(url);
  if (u.scheme === '' && u.host === '') return url;
  if (ctx.realmUrl && (url === ctx.realmUrl || url.startsWith(ctx.realmUrl + '/'))) return url;
  return camoUrl(ctx.imageProxy, url);
}

/** The `<img>` of an uploaded image's preview: its thumbnail, or the loading placeholder. */
export function uploadImg(preview: UploadPreview): El {
  const img = new El('img');
  if (preview.thumbnail_url === null) {
    img.attrs.class = 'image-loading-placeholder';
    img.attrs['data-original-content-type'] = preview.content_type;
    img.attrs['data-original-dimensions'] =
      `${preview.original_width_px}x${preview.original_height_px}`;
    img.attrs.src = LOADING_PLACEHOLDER_SRC;
    return img;
  }
  // The attributes in the order the reference's rewrite leaves them.
  img.ordered = true;
  img.attrs['data-original-content-type'] = preview.content_type;
  img.attrs['data-original-dimensions'] =
    `${preview.original_width_px}x${preview.original_height_px}`;
  img.attrs.src = preview.thumbnail_url;
  if (preview.animated) img.attrs['data-animated'] = 'true';
  if (preview.transcoded_image) img.attrs['data-transcoded-image'] = preview.transcoded_image;
  return img;
}

function previewDiv(
  ctx: PreparedContext,
  opts: RenderOptions,
  imageUrl: string,
  link: string,
  title: string | null,
  cls = 'message_inline_image',
  dataId: string | null = null,
): El {
  const div = new El('div', { class: cls });
  const a = div.append(new El('a', { href: link }));
  if (title !== null) a.attrs.title = title;
  if (dataId !== null) a.attrs['data-id'] = dataId;
  const upload = imageUrl.startsWith('/user_uploads/')
    ? opts.upload_previews?.[imageUrl.slice('/user_uploads/'.length)]
    : undefined;
  a.append(upload ? uploadImg(upload) : new El('img', { src: proxied(ctx, imageUrl) }));
  return div;
}

function videoDiv(ctx: PreparedContext, url: string, title: string | null): El {
  const div = new El('div', { class: 'message_inline_image message_inline_video' });
  const a = div.append(new El('a', { href: url }));
  if (title) a.attrs.title = title;
  a.append(new El('video', { preload: 'metadata', src: proxied(ctx, url) }));
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

type Placement = { parent: El; index: number | null; remove: El | null; title: string | null };

/** Where a preview of link `f` goes, and what it replaces (the reference's inlining rules). */
function placement(root: El, f: Found, text: string): Placement {
  const url = f.a.attrs.href!;
  const urlEqText = text === url;
  const out: Placement = {
    parent: root,
    index: null,
    remove: null,
    title: urlEqText ? null : text,
  };
  if (f.parent.tag === 'li') {
    out.parent = f.parent;
    if (!f.parent.text && !f.a.tail && urlEqText) out.remove = f.a;
  } else if (f.parent.tag === 'p' && f.grandparent) {
    out.parent = f.grandparent;
    if (
      f.parent.children.length === 1 &&
      (!f.parent.text || f.parent.text === '\n') &&
      !f.a.tail &&
      urlEqText
    )
      out.remove = f.parent;
    out.index = insertionIndex(f.grandparent, f.parent);
  }
  return out;
}

function place(p: Placement, div: El, removeLink: boolean): void {
  if (p.index === null) p.parent.append(div);
  else p.parent.children.splice(p.index, 0, div);
  if (removeLink && p.remove) removeChild(p.parent, p.remove);
}

export function addLinkPreviews(
  root: El,
  ctx: PreparedContext,
  opts: RenderOptions,
): { hasLink: boolean; hasImage: boolean; pathIds: string[] } {
  const found = findLinks(root);
  const pathIds: string[] = [];
  for (const f of found) {
    const id = uploadPathId(ctx.realmHost, f.a.attrs.href!);
    if (id !== null && !pathIds.includes(id)) pathIds.push(id);
  }
  let hasImage = false;
  const previewable = new Set(found.filter((f) => !f.inQuote).map((f) => f.a.attrs.href!));
  if (!opts.no_previews && found.length > 0 && previewable.size <= PREVIEW_LIMIT) {
    const done = new Set<string>();
    for (const f of found) {
      const url = f.a.attrs.href!;
      if (!previewable.has(url) || done.has(url)) continue;
      done.add(url);
      if (isVideo(url)) {
        const p = placement(root, f, f.a.text);
        place(p, videoDiv(ctx, url, p.title), true);
        continue;
      }
      if (isImage(url, opts)) {
        const corrected = correctedImageSource(url);
        const link = corrected ?? url;
        const p = placement(
          root,
          {
            ...f,
            a: corrected
              ? Object.assign(new El('a', { href: corrected }), { text: corrected, tail: f.a.tail })
              : f.a,
          },
          corrected ?? f.a.text,
        );
        place(p, previewDiv(ctx, opts, actualImageUrl(link), link, p.title), true);
        hasImage = true;
        continue;
      }
      const host = splitUrl(url).host;
      if (host === '' || host === ctx.realmHost.toLowerCase()) continue;
      const yt = youtubeId(url);
      if (yt !== null) {
        const p = placement(root, f, f.a.text);
        const still = `https://i.ytimg.com/vi/${yt}/mqdefault.jpg`;
        place(
          p,
          previewDiv(ctx, opts, still, url, null, 'youtube-video message_inline_image', yt),
          false,
        );
        hasImage = true;
      }
    }
  }
  return { hasLink: found.length > 0, hasImage, pathIds };
}
