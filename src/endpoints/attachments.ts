/**
 * A user's uploaded files. Reference: views/attachments.py (list_by_user, remove).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { pathInt } from '../lib/params.js';
import { uploadSpaceUsed, userAttachments } from '../queries/attachments.js';

/** GET /api/v1/attachments: the caller's uploads, with the messages referencing each. */
export const listAttachments = endpoint({
  method: 'GET',
  path: '/api/v1/attachments',
  params: z.object({}),
  handle: ({ server, realm, user }) => ({
    attachments: userAttachments(server.store, user.id),
    upload_space_used: uploadSpaceUsed(server.store, realm.id),
  }),
});

/**
 * DELETE /api/v1/attachments/{attachment_id}: the owner deletes an upload (even one messages
 * still link to: the links then lead nowhere). The row goes first, in the realm actor; the file
 * after, so a file is never served without its row.
 */
export const removeAttachment = endpoint({
  method: 'DELETE',
  path: '/api/v1/attachments/:attachment_id',
  params: z.object({ attachment_id: pathInt() }),
  handle: async ({ server, realm, user }, p) => {
    const { path_id } = await realm.ask('attachment.remove', {
      user_id: user.id,
      attachment_id: p.attachment_id,
    });
    try {
      await server.uploads.remove(path_id);
    } catch (err) {
      // The upload is gone for every client; only disk space is left behind.
      console.error(`removing the file of upload ${path_id} failed:`, err);
    }
    return {};
  },
});
