/**
 * Recognizing the images custom emoji may be made of, from their first bytes (the declared
 * content type is not trusted): PNG, GIF, JPEG and WebP, and whether the image is animated
 * (an APNG, a GIF of several frames, an animated WebP).
 */

export type ImageKind = {
  ext: 'png' | 'gif' | 'jpg' | 'webp';
  contentType: string;
  animated: boolean;
};

export const IMAGE_CONTENT_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  gif: 'image/gif',
  jpg: 'image/jpeg',
  webp: 'image/webp',
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngAnimated(b: Buffer): boolean {
  // Chunks: length (4), type (4), data, CRC (4). An `acTL` before the first `IDAT` makes an APNG.
  let at = 8;
  while (at + 8 <= b.length) {
    const len = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    if (type === 'acTL') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    at += 12 + len;
  }
  return false;
}

/** Skips GIF data sub-blocks starting at `at`; returns the offset after the terminator. */
function skipSubBlocks(b: Buffer, at: number): number {
  while (at < b.length) {
    const size = b[at]!;
    at += 1;
    if (size === 0) return at;
    at += size;
  }
  return at;
}

function gifFrames(b: Buffer): number {
  if (b.length < 13) return 0;
  const flags = b[10]!;
  let at = 13 + (flags & 0x80 ? 3 * (1 << ((flags & 7) + 1)) : 0);
  let frames = 0;
  while (at < b.length) {
    const block = b[at]!;
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      at = skipSubBlocks(b, at + 2); // extension: introducer, label, sub-blocks
    } else if (block === 0x2c) {
      frames++;
      if (frames > 1) return frames;
      const local = b[at + 9] ?? 0;
      at += 10 + (local & 0x80 ? 3 * (1 << ((local & 7) + 1)) : 0);
      at = skipSubBlocks(b, at + 1); // LZW minimum code size, then the image data
    } else {
      break;
    }
  }
  return frames;
}

/** The kind of image `b` holds, or null when it is not one of the accepted formats. */
export function imageKind(b: Buffer): ImageKind | null {
  if (b.length >= 8 && b.subarray(0, 8).equals(PNG_SIGNATURE)) {
    return { ext: 'png', contentType: 'image/png', animated: pngAnimated(b) };
  }
  const head6 = b.toString('latin1', 0, 6);
  if (head6 === 'GIF87a' || head6 === 'GIF89a') {
    return { ext: 'gif', contentType: 'image/gif', animated: gifFrames(b) > 1 };
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    return { ext: 'jpg', contentType: 'image/jpeg', animated: false };
  }
  if (
    b.length >= 16 &&
    b.toString('latin1', 0, 4) === 'RIFF' &&
    b.toString('latin1', 8, 12) === 'WEBP'
  ) {
    const chunk = b.toString('latin1', 12, 16);
    const animated = chunk === 'VP8X' && b.length > 20 && (b[20]! & 0x02) !== 0;
    return { ext: 'webp', contentType: 'image/webp', animated };
  }
  return null;
}
