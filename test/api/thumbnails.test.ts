/**
 * Thumbnails of uploaded images end to end: an upload that decodes as an image is recorded with
 * its size; a message linking it shows the reference's loading placeholder until the thumbnail is
 * made, then every reader gets an `update_message` event with `rendering_only` and the thumbnail
 * markup (`/user_uploads/thumbnail/<path_id>/840x560.webp`, `data-original-dimensions`); a
 * message sent afterwards has the thumbnail at once; animated images get the animated format.
 * Thumbnails are served with the upload's access rules. Files that are not images, and images
 * over the decompression-bomb limit, get no preview.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { until } from '../helpers/events.js';
import { pngHeaderOnly } from '../helpers/images.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { download, upload } from '../helpers/uploads.js';

/** Three distinct 60×40 frames (identical frames would be merged by the WebP encoder). */
const ANIMATION = await sharp(
  await Promise.all(
    [0, 120, 240].map((r) =>
      sharp({ create: { width: 60, height: 40, channels: 3, background: { r, g: 0, b: 0 } } })
        .png()
        .toBuffer(),
    ),
  ),
  { join: { animated: true } },
)
  .gif()
  .toBuffer();

const PHOTO = await sharp({
  create: { width: 1200, height: 900, channels: 3, background: { r: 10, g: 120, b: 200 } },
})
  .png()
  .toBuffer();

async function uploadFile(
  s: TestServer,
  t: Parameters<typeof assertSuccess>[0],
  name: string,
  data: Buffer,
  type: string,
) {
  const r = assertSuccess(
    t,
    await upload(s.api, 'iago', [{ filename: name, data, contentType: type }]),
  );
  return String(r.url);
}

async function content(s: TestServer, id: number): Promise<string> {
  const r = await s.api.get('iago', 'messages', { message_ids: [id] });
  return (r.body.messages as { content: string }[])[0]!.content;
}

t.test('placeholder, then the thumbnail, with a rendering-only update', async (t) => {
  const s = await startServer(t);
  const { api, server } = s;
  await api.post('iago', 'users/me/subscriptions', {
    subscriptions: [{ name: 'photos' }],
    principals: [s.fx.users.iago!.id, s.fx.users.hamlet!.id],
    invite_only: true,
  });
  server.context.thumbnailer.pause();
  const url = await uploadFile(s, t, 'photo.png', PHOTO, 'image/png');
  const pathId = url.slice('/user_uploads/'.length);
  const id = await sendChannelMessage(api, 'iago', 'photos', 'trip', `[photo.png](${url})`);
  const placeholder =
    `<p><a href="${url}">photo.png</a></p>\n<div class="message_inline_image"><a href="${url}" title="photo.png">` +
    '<img class="image-loading-placeholder" data-original-content-type="image/png" data-original-dimensions="1200x900" src="/static/images/loading/loader-black.svg"></a></div>';
  t.equal(
    await content(s, id),
    placeholder,
    "the reference's placeholder while the thumbnail is made",
  );

  const before = s.events.length;
  server.context.thumbnailer.resume();
  await until(
    () => s.events.slice(before).some((e) => e.event.type === 'update_message'),
    'the rendering-only update',
    60_000,
  );
  const update = s.events.slice(before).find((e) => e.event.type === 'update_message')!;
  const thumb = `/user_uploads/thumbnail/${pathId}/840x560.webp`;
  const expected =
    `<p><a href="${url}">photo.png</a></p>\n<div class="message_inline_image"><a href="${url}" title="photo.png">` +
    `<img data-original-content-type="image/png" data-original-dimensions="1200x900" src="${thumb}"></a></div>`;
  t.equal(update.event.rendering_only, true);
  t.equal(update.event.user_id, null);
  t.same(update.event.message_ids, [id]);
  t.equal(update.event.rendered_content, expected);
  t.same(
    [...update.users].sort(),
    [s.fx.users.iago!.id, s.fx.users.hamlet!.id].sort(),
    'to its readers',
  );
  t.equal(await content(s, id), expected, 'the stored rendering changed');

  const r = await download(api, 'hamlet', thumb);
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'image/webp');
  t.equal(r.headers['x-content-type-options'], 'nosniff');
  const meta = await sharp(r.body).metadata();
  t.same(
    [meta.format, meta.width, meta.height],
    ['webp', 747, 560],
    'fits 840×560, keeps the shape',
  );

  const again = await sendChannelMessage(api, 'iago', 'photos', 'trip', `[photo.png](${url})`);
  t.equal(await content(s, again), expected, 'a later message has the thumbnail at once');

  // Access follows the upload: othello cannot see the channel's messages; nobody unauthenticated.
  t.equal((await download(api, 'othello', thumb)).status, 404);
  t.equal((await download(api, null, thumb)).status, 401);
  const near = await download(api, 'hamlet', `/user_uploads/thumbnail/${pathId}/300x200.webp`);
  t.equal(near.status, 200, 'a format not made is answered with the closest one made');
  t.equal(
    (await download(api, 'hamlet', `/user_uploads/thumbnail/${pathId}/big.webp`)).status,
    404,
  );
  t.equal(
    (await download(api, 'hamlet', `/user_uploads/thumbnail/${pathId}/840x560-anim.webp`)).status,
    200,
    'a still image answers a request for the animated format with its still one',
  );

  const files = path.join(s.dataDir, 'uploads', 'thumbnail', pathId);
  t.ok(fs.existsSync(path.join(files, '840x560.webp')), 'stored under DATA_DIR/uploads/thumbnail');
  const list = assertSuccess(t, await api.get('iago', 'attachments')).attachments as {
    id: number;
  }[];
  assertSuccess(t, await api.delete('iago', `attachments/${list[0]!.id}`));
  t.notOk(fs.existsSync(files), 'deleting the upload deletes its thumbnails');
});

t.test('animated images, and uploads that get no preview', async (t) => {
  const s = await startServer(t);
  const { api, server } = s;
  await api.post('iago', 'users/me/subscriptions', { subscriptions: [{ name: 'gifs' }] });
  const gif = await uploadFile(s, t, 'dance.gif', ANIMATION, 'image/gif');
  const gifPath = gif.slice('/user_uploads/'.length);
  const row = () => server.context.store.imageAttachments.byPathId(gifPath);
  t.equal(row()?.frames, 3, 'recorded with its frames');
  await until(() => row()?.thumbnail_metadata !== '[]', 'the thumbnails', 60_000);
  const id = await sendChannelMessage(api, 'iago', 'gifs', 'fun', `[dance.gif](${gif})`);
  t.equal(
    await content(s, id),
    `<p><a href="${gif}">dance.gif</a></p>\n<div class="message_inline_image"><a href="${gif}" title="dance.gif"><img data-original-content-type="image/gif" data-original-dimensions="60x40" src="/user_uploads/thumbnail/${gifPath}/840x560-anim.webp" data-animated="true"></a></div>`,
    'the animated thumbnail, marked animated',
  );
  const anim = await download(api, 'iago', `/user_uploads/thumbnail/${gifPath}/840x560-anim.webp`);
  t.equal((await sharp(anim.body, { pages: -1 }).metadata()).pages, 3, 'the frames are kept');

  const fake = await uploadFile(s, t, 'fake.png', Buffer.from('not an image at all'), 'image/png');
  const bomb = await uploadFile(s, t, 'bomb.png', pngHeaderOnly(30000, 30000), 'image/png');
  for (const [u, what] of [
    [fake, 'a file that is not an image'],
    [bomb, 'an image over the pixel limit'],
  ] as const) {
    t.equal(
      server.context.store.imageAttachments.byPathId(u.slice(14)),
      undefined,
      `${what}: no image row`,
    );
    const m = await sendChannelMessage(api, 'iago', 'gifs', 'fun', `[x](${u})`);
    t.equal(await content(s, m), `<p><a href="${u}">x</a></p>`, `${what}: no preview`);
  }
});
