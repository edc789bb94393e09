/**
 * Thumbnails of uploaded images, as the reference makes and names them (lib/thumbnail.py): WebP
 * at most 840×560, an animated one too when the original has several frames, and for types
 * browsers cannot show (HEIC, TIFF) a full-size WebP at most 4032×3024 (3024×4032 upright).
 * Stored and served at `/user_uploads/thumbnail/<path_id>/<format>` (`840x560.webp`,
 * `840x560-anim.webp`). Also: the loading placeholder in rendered messages, rewritten once the
 * thumbnail is made (or the preview removed when the image cannot be decoded).
 */
import type { UploadPreview } from './markdown/context.js';
import { LOADING_PLACEHOLDER_SRC, uploadImg } from './markdown/previews.js';
import { serialize } from './markdown/tree.js';
import { INLINE_MIME_TYPES } from './uploads.js';

export type ThumbnailFormat = {
  extension: string;
  max_width: number;
  max_height: number;
  animated: boolean;
};

/** A made thumbnail (the reference's StoredThumbnailFormat). */
export type StoredThumbnail = ThumbnailFormat & {
  content_type: string;
  width: number;
  height: number;
  byte_size: number;
};

/** The default thumbnails, in the reference's order of preference. */
export const THUMBNAIL_OUTPUT_FORMATS: readonly ThumbnailFormat[] = [
  { extension: 'webp', max_width: 840, max_height: 560, animated: true },
  { extension: 'webp', max_width: 840, max_height: 560, animated: false },
];
export const TRANSCODED_IMAGE_FORMAT: ThumbnailFormat = {
  extension: 'webp',
  max_width: 4032,
  max_height: 3024,
  animated: false,
};

/** The types the server reads as images. */
export const THUMBNAIL_ACCEPT_IMAGE_TYPES = new Set([
  'image/avif',
  'image/gif',
  'image/heic',
  'image/jpeg',
  'image/png',
  'image/tiff',
  'image/webp',
]);

/** Decompression-bomb limits: total pixels of an image, and of the frames of an animation read. */
export const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
export const IMAGE_MAX_ANIMATED_PIXELS = IMAGE_BOMB_TOTAL_PIXELS / 3;

export function formatName(f: ThumbnailFormat): string {
  return `${f.max_width}x${f.max_height}${f.animated ? '-anim' : ''}.${f.extension}`;
}

export function parseFormatName(name: string): ThumbnailFormat | null {
  const m = /^(\d{1,5})x(\d{1,5})(-anim)?\.(\w+)$/.exec(name);
  if (!m) return null;
  return {
    max_width: Number(m[1]),
    max_height: Number(m[2]),
    animated: m[3] !== undefined,
    extension: m[4]!,
  };
}

export function sameFormat(a: ThumbnailFormat, b: ThumbnailFormat): boolean {
  return formatName(a) === formatName(b);
}

export type ImageFacts = {
  original_width_px: number;
  original_height_px: number;
  frames: number;
  content_type: string;
  thumbnails: readonly StoredThumbnail[];
};

/** The stored form of an image (a row of image_attachments). */
export type StoredImage = {
  original_width_px: number;
  original_height_px: number;
  frames: number;
  content_type: string;
  /** JSON: StoredThumbnail[]. */
  thumbnail_metadata: string;
};

export function storedThumbnails(row: Pick<StoredImage, 'thumbnail_metadata'>): StoredThumbnail[] {
  try {
    const v = JSON.parse(row.thumbnail_metadata) as unknown;
    return Array.isArray(v) ? (v as StoredThumbnail[]) : [];
  } catch {
    return [];
  }
}

export function imageFacts(row: StoredImage): ImageFacts {
  return {
    original_width_px: row.original_width_px,
    original_height_px: row.original_height_px,
    frames: row.frames,
    content_type: row.content_type,
    thumbnails: storedThumbnails(row),
  };
}

/** Every format this image should have. */
export function wantedFormats(img: ImageFacts): ThumbnailFormat[] {
  const out = [...THUMBNAIL_OUTPUT_FORMATS];
  if (!INLINE_MIME_TYPES.has(img.content_type)) {
    const t = TRANSCODED_IMAGE_FORMAT;
    out.push(
      img.original_width_px >= img.original_height_px
        ? t
        : { ...t, max_width: t.max_height, max_height: t.max_width },
    );
  }
  return img.frames === 1 ? out.filter((f) => !f.animated) : out;
}

export function missingFormats(img: ImageFacts): ThumbnailFormat[] {
  return wantedFormats(img).filter((f) => !img.thumbnails.some((t) => sameFormat(t, f)));
}

export function thumbnailPath(pathId: string, f: ThumbnailFormat): string {
  return `thumbnail/${pathId}/${formatName(f)}`;
}

/** How the renderer previews this image (the reference's get_user_upload_previews). */
export function uploadPreviewOf(pathId: string, img: ImageFacts): UploadPreview {
  const base = {
    original_width_px: img.original_width_px,
    original_height_px: img.original_height_px,
    content_type: img.content_type,
  };
  if (img.thumbnails.length === 0)
    return { ...base, thumbnail_url: null, animated: false, transcoded_image: null };
  const chosen =
    THUMBNAIL_OUTPUT_FORMATS.find((f) => f.animated === img.frames > 1) ??
    THUMBNAIL_OUTPUT_FORMATS[0]!;
  let transcoded: string | null = null;
  if (!INLINE_MIME_TYPES.has(img.content_type)) {
    const largest = [...img.thumbnails]
      .sort((a, b) => a.width * a.height - b.width * b.height)
      .pop();
    if (largest) transcoded = formatName(largest);
  }
  return {
    ...base,
    thumbnail_url: `/user_uploads/${thumbnailPath(pathId, chosen)}`,
    animated: chosen.animated,
    transcoded_image: transcoded,
  };
}

/** Path ids of uploads named in message content, as the reference finds them before rendering. */
export function uploadPathIdsIn(content: string): string[] {
  return [
    ...new Set(
      [...content.matchAll(/\/user_uploads\/(\d+\/[/\p{L}\p{N}_.-]+)/gu)].map((m) => m[1]!),
    ),
  ];
}

const PLACEHOLDER_DIV =
  /(\n?)<div class="message_inline_image"><a href="\/user_uploads\/([^"]*)"((?: title="[^"]*")?)><img class="image-loading-placeholder" data-original-content-type="[^"]*" data-original-dimensions="[^"]*" src="[^"]*"><\/a><\/div>/g;

function unescapeAttr(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * `html` with the loading placeholders of `pathId` replaced by the thumbnail (`preview`), or
 * their previews removed (`preview` null: the upload is not an image after all); null when
 * `html` has no such placeholder.
 */
export function rewriteThumbnails(
  html: string,
  pathId: string,
  preview: UploadPreview | null,
): string | null {
  let changed = false;
  const out = html.replace(PLACEHOLDER_DIV, (whole, nl: string, href: string, title: string) => {
    if (unescapeAttr(href) !== pathId) return whole;
    if (preview !== null && preview.thumbnail_url === null) return whole;
    changed = true;
    if (preview === null) return ''; // with the line break before it
    const img: string[] = [];
    serialize(uploadImg(preview), img);
    return `${nl}<div class="message_inline_image"><a href="/user_uploads/${href}"${title}>${img.join('')}</a></div>`;
  });
  if (!changed) return null;
  return preview === null ? out.trim() : out;
}

export { LOADING_PLACEHOLDER_SRC };
