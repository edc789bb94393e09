/**
 * The default avatar and realm icon (src/lib/avatars.ts), served by this server so that no client
 * asks an outside host for them: plain shapes drawn once (SVG rendered to PNG by sharp, no font
 * needed), on first request (sharp itself loaded then: ../media/sharp.ts), and kept. No
 * authentication (any client shows them), no rate limit, cached for a day (the URL does not change
 * with the picture).
 */
import { internalErrorBody } from '../lib/errors.js';
import { log } from '../observability/log.js';
import { loadSharp } from '../media/sharp.js';
import { DEFAULT_AVATAR_PATH, DEFAULT_REALM_ICON_PATH } from '../lib/avatars.js';
import type { ServerConfig } from '../config.js';
import { RequestContext } from './request.js';
import { requestFinished } from './request-log.js';
import { send } from './respond.js';
import { etagMatches, etagOf, writeWithoutBody } from './static-files.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** A head and shoulders, light on grey. */
const AVATAR_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 200 200">
<rect width="200" height="200" fill="#b9c2cc"/>
<circle cx="100" cy="80" r="38" fill="#eef1f4"/>
<path d="M28 200c0-44 32-72 72-72s72 28 72 72z" fill="#eef1f4"/>
</svg>`;

/** A speech bubble on a rounded square. */
const REALM_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 200 200">
<rect width="200" height="200" rx="40" fill="#4a6fa5"/>
<path d="M52 50h96a18 18 0 0 1 18 18v52a18 18 0 0 1-18 18H100l-34 28v-28H52a18 18 0 0 1-18-18V68a18 18 0 0 1 18-18z" fill="#fff"/>
</svg>`;

type Image = { png: Buffer; etag: string };

async function render(svg: string): Promise<Image> {
  const sharp = await loadSharp();
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  return { png, etag: etagOf(png) };
}

export function mountDefaultImages(app: TemplatedApp, config: ServerConfig): void {
  for (const [route, svg] of [
    [DEFAULT_AVATAR_PATH, AVATAR_SVG],
    [DEFAULT_REALM_ICON_PATH, REALM_ICON_SVG],
  ] as const) {
    let image: Promise<Image> | null = null;
    app.get(route, (res: HttpResponse, req: HttpRequest) => {
      const ctx = new RequestContext(req, 0, 'GET');
      const ifNoneMatch = req.getHeader('if-none-match');
      res.onAborted(() => ctx.markAborted());
      image ??= render(svg);
      image.then(
        ({ png, etag }) => {
          const headers = {
            'Cache-Control': 'public, max-age=86400',
            ETag: etag,
            'X-Content-Type-Options': 'nosniff',
          };
          if (etagMatches(ifNoneMatch, etag)) writeWithoutBody(res, ctx, 304, headers, null);
          else send(res, ctx, 200, png, 'image/png', headers);
          requestFinished(ctx, route, config);
        },
        (err: unknown) => {
          image = null; // tried again by the next request
          log.error({ err, route }, 'the default image could not be drawn');
          send(res, ctx, 500, JSON.stringify(internalErrorBody()));
          requestFinished(ctx, route, config);
        },
      );
    });
  }
}
