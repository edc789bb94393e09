/**
 * Uploaded images the server previews (the reference's ImageAttachment): the original's size and
 * frame count, read when it was uploaded, and the thumbnails made so far (JSON list of
 * { extension, content_type, max_width, max_height, animated, width, height, byte_size }; empty
 * until the first is made). One row per upload that decoded as an image.
 */
export const m0018_image_attachments = {
  name: '0018_image_attachments',
  sql: `
CREATE TABLE image_attachments (
  id                  INTEGER PRIMARY KEY,
  realm_id            INTEGER NOT NULL REFERENCES realms(id),
  path_id             TEXT NOT NULL UNIQUE,
  original_width_px   INTEGER NOT NULL,
  original_height_px  INTEGER NOT NULL,
  frames              INTEGER NOT NULL,
  content_type        TEXT NOT NULL,
  thumbnail_metadata  TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX image_attachments_pending ON image_attachments(id) WHERE thumbnail_metadata = '[]';
`,
};
