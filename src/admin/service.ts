/**
 * Running admin commands and turning their outcome into an admin-socket answer: used by the
 * server for requests on its admin socket and by the admin tool when it opened the data
 * directory itself, so both give the same answers.
 */
import { JsonableError } from '../lib/errors.js';
import { COMMANDS, runCommand, type AdminRuntime, type Args } from './commands.js';
import { UsageError } from './errors.js';
import type { AdminRequest, AdminResponse } from './socket.js';

export async function handleAdminRequest(
  rt: AdminRuntime,
  req: AdminRequest,
): Promise<AdminResponse> {
  if (COMMANDS[req.command]?.offline) {
    return {
      ok: false,
      error: `${req.command} needs the server stopped: it is running on ${rt.config.dataDir}`,
      code: 'SERVER_RUNNING',
    };
  }
  try {
    return { ok: true, result: await runCommand(rt, req.command, req.args as Args) };
  } catch (err) {
    if (err instanceof UsageError) return { ok: false, error: err.message, code: 'USAGE' };
    if (err instanceof JsonableError) return { ok: false, error: err.message, code: err.code };
    throw err;
  }
}
