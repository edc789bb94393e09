/**
 * sharp (libvips), loaded on first use: by the first image probed or thumbnailed
 * (./thumbnailer.ts) or the first default image drawn (../http/default-images.ts). Importing the
 * server does not load it (~40 modules, ~50 ms of CPU at each process's start), so a process that
 * handles no image (most test files, a server whose users upload none) never pays for it.
 *
 * A missing package still stops the import of the server, as the static import did: the package
 * is resolved (not loaded) when this module is imported, with the same ERR_MODULE_NOT_FOUND (on
 * Node 20.6 and later; before, import.meta.resolve needs a flag, and the first use fails). A
 * package present whose native part fails to load (libvips for another platform) fails its first
 * use instead of the start: the error is logged once, and every use rejects with it.
 */
import type SharpModule from 'sharp';
import { log } from '../observability/log.js';

export type Sharp = typeof SharpModule;

const SHARP_URL = import.meta.resolve?.('sharp') ?? 'sharp';

let loading: Promise<Sharp> | null = null;

/** The sharp function, configured for this server (one libvips thread, no cache). */
export function loadSharp(): Promise<Sharp> {
  loading ??= import(SHARP_URL).then(
    (m: { default: Sharp }) => {
      const sharp = m.default;
      // libvips may use one thread per image: the machine's cores are shared with everything else.
      sharp.concurrency(1);
      sharp.cache(false);
      return sharp;
    },
    (err: unknown) => {
      log.error({ err }, 'sharp could not be loaded: no image can be read or drawn');
      throw err;
    },
  );
  return loading;
}
