/**
 * Running admin commands and turning their outcome into an admin-socket answer: used by the
 * server for requests on its admin socket and by the admin tool when it opened the data
 * directory itself, so both give the same answers.
 */
import { auditExtra, type ToolOrigin } from '../lib/audit.js';
import { JsonableError } from '../lib/errors.js';
import { log } from '../observability/log.js';
import { isClusterCopy } from '../storage/replication.js';
import { COMMANDS, runCommand, type AdminRuntime, type Args } from './commands.js';
import { UsageError } from './errors.js';
import type { AdminRequest, AdminResponse } from './socket-client.js';
// What the commands import when they run (commands.ts "Loading"), loaded with the server from its
// start as before: a command never reads code from dist/ once the server runs (an upgrade may
// have replaced it by then). The admin tool loads this module only to run a command itself.
// test/unit/admin-preload fails when this list and the commands' import()s drift apart.
import './backup.js';
import './realm-export.js';
import './realm-import.js';
import './tool-audit.js';
import '../realm-setup.js';
import '../queries/render-context.js';
import '../queries/welcome.js';

export async function handleAdminRequest(
  base: Omit<AdminRuntime, 'origin'>,
  req: AdminRequest,
): Promise<AdminResponse> {
  const origin: ToolOrigin = req.origin ?? { via: 'admin_tool', os_user: 'unknown' };
  const rt: AdminRuntime = { ...base, origin };
  const cmd = COMMANDS[req.command];
  // Every command the tool runs, in the log: who, what (the options, without secrets), on what.
  log.info(
    { admin: { command: req.command, args: auditExtra(req.args), os_user: origin.os_user } },
    `admin tool: ${req.command}`,
  );
  if (cmd?.offline) {
    return {
      ok: false,
      error: `${req.command} needs the server stopped: it is running on ${rt.config.dataDir}`,
      code: 'SERVER_RUNNING',
    };
  }
  // A cluster node's copy changes only through the cluster's log (docs/cluster.md "The admin
  // tool"): a change made beside it would reach no other node, and the copy would diverge.
  const clusterCopy = rt.realms.clustered || isClusterCopy(rt.store.db);
  if (cmd?.notOnCluster && clusterCopy) {
    return {
      ok: false,
      error: `${req.command} does not run on a cluster node or its data directory`,
      code: 'USAGE',
    };
  }
  if (cmd && !cmd.readOnly && clusterCopy && !rt.realms.clustered) {
    return {
      ok: false,
      error:
        `${req.command} changes data, and ${rt.config.dataDir} is a cluster node's data ` +
        'directory with no node running on it: a change made here would reach no other node. ' +
        `Start the node and run ${req.command} again: it then runs in the node, through its ` +
        'admin socket, and reaches every node.',
      code: 'CLUSTER_NODE_NOT_RUNNING',
    };
  }
  try {
    // On a cluster node, as for its API requests: first what other nodes committed before.
    if (cmd && rt.readBarrier) await rt.readBarrier();
    return { ok: true, result: await runCommand(rt, req.command, req.args as Args) };
  } catch (err) {
    if (err instanceof UsageError) return { ok: false, error: err.message, code: 'USAGE' };
    if (err instanceof JsonableError) return { ok: false, error: err.message, code: err.code };
    throw err;
  }
}
