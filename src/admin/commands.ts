/**
 * The admin tool's commands (`npm run manage -- <command>`; docs/operations.md "Admin tool").
 * Each one is described here once — its options (node:util parseArgs), whether it needs a
 * password, its help text — and runs against an AdminRuntime: the running server's (through the
 * admin socket, src/admin/socket.ts) or the tool's own, opened on the data directory under its
 * lock when no server runs. Either way every change goes through the realm actors. On a cluster
 * node's data directory, only the node itself may change anything (service.ts).
 *
 * Every command prints one JSON object. Passwords never come from the command line: the tool
 * reads them from a prompt, standard input or a named environment variable (src/manage.ts) and
 * passes them in `args.password`.
 *
 * The commands themselves: account-commands.ts (realms, users, invitations), realm-commands.ts
 * (a realm's organization), data-commands.ts (backup, restore, export, import, queue statistics),
 * ops-commands.ts (audit log, check-config); command-args.ts reads their arguments.
 *
 * Loading: this table is all the tool loads for --help, a usage error, or a command it sends to a
 * running server (src/manage.ts), so the command modules import only light modules statically.
 * What a command runs on beyond its AdminRuntime (a realm's setup, the renderer's context, the
 * backup, the archives, the audit rows of tool-audit.ts) it imports with import() when it runs;
 * the server has all of it loaded from its start (service.ts).
 */
import type { ParseArgsConfig } from 'node:util';
import type { EventQueues } from '../delivery/publisher.js';
import type { RealmRegistry } from '../../actors/registry.js';
import type { ServerConfig } from '../config.js';
import type { AuditOrigin } from '../lib/audit.js';
import type { Store } from '../storage/store.js';
import type { RenderPool } from '../../workers/pool.js';
import { ACCOUNT_COMMANDS } from './account-commands.js';
import { DATA_COMMANDS } from './data-commands.js';
import { OPS_COMMANDS } from './ops-commands.js';
import { REALM_COMMANDS as REALM_ADMIN_COMMANDS } from './realm-commands.js';
import { UsageError } from './errors.js';

/** What a command runs against. */
export type AdminRuntime = {
  config: ServerConfig;
  store: Store;
  realms: RealmRegistry;
  renderer: RenderPool;
  /** The running server's event queues; null when the tool opened the data directory itself. */
  queues: EventQueues | null;
  /**
   * A cluster node's read barrier (src/cluster/node.ts): resolves once this node's copy has
   * applied what the log held when it was called, so that a command sees every write committed
   * before it through any node (rejects 503 if the node cannot catch up in time).
   */
  readBarrier?: () => Promise<void>;
  /** Who runs the command (the audit log's origin: the admin tool and its user). */
  origin: AuditOrigin;
};

export { UsageError };

type Options = NonNullable<ParseArgsConfig['options']>;
export type Args = Record<string, string | boolean | undefined>;

export type AdminCommand = {
  summary: string;
  /** Extra lines for --help (the options are listed from `options`). */
  details?: string;
  options: Options;
  /** Option descriptions for --help, by option name. */
  describe: Record<string, string>;
  required?: readonly string[];
  /** Whether the tool asks for a password (`optional`: unless --without-password). */
  password?: 'required' | 'optional';
  /** Options that name files or directories (made absolute: the server may run elsewhere). */
  paths?: readonly string[];
  /** Runs only without a server on the data directory (restore). */
  offline?: boolean;
  /**
   * Changes nothing in the database (lists, backup, export). Every other command is refused on a
   * cluster node's data directory unless the node runs it (service.ts).
   */
  readOnly?: boolean;
  /** Refused on a cluster node and on its data directory (import-realm). */
  notOnCluster?: boolean;
  run(rt: AdminRuntime, args: Args): Promise<unknown>;
  /**
   * Runs in the tool's own process on the settings alone, instead of `run` (check-config): no
   * data directory is opened or asked. An answer with `ok: false` exits 1.
   */
  runLocal?: (config: ServerConfig, args: Args) => Promise<{ ok: boolean }>;
};

// ---- the commands -----------------------------------------------------------------------------

export const COMMANDS: Record<string, AdminCommand> = {
  ...ACCOUNT_COMMANDS,
  ...REALM_ADMIN_COMMANDS,
  ...DATA_COMMANDS,
  ...OPS_COMMANDS,
};

/** A command's --help text. */
export function commandHelp(name: string, cmd: AdminCommand): string {
  const lines = [`npm run -s manage -- ${name} [options]`, '', cmd.summary];
  if (cmd.details) lines.push('', cmd.details);
  const names = Object.keys(cmd.options);
  if (names.length > 0) {
    lines.push('', 'Options:');
    for (const o of names) {
      const isBool = cmd.options[o]!.type === 'boolean';
      const req = cmd.required?.includes(o) ? ' (required)' : '';
      lines.push(`  --${o}${isBool ? '' : ' VALUE'}${req}: ${cmd.describe[o] ?? ''}`);
    }
  }
  if (cmd.password) {
    lines.push(
      '',
      'The password is asked for on the terminal, or read from standard input (--password-stdin)',
      'or from an environment variable (--password-env NAME); never from the command line.',
    );
  }
  lines.push(
    '',
    'Common options: --env-file FILE (the server’s settings: DATA_DIR, EXTERNAL_HOST, ...), --help.',
    'Prints one JSON object. With a server running on DATA_DIR the command runs in the server.',
  );
  return lines.join('\n');
}

/**
 * Runs a command in this process (the server's admin socket, or the tool's own runtime).
 * Refusals come back as JsonableError or UsageError.
 */
export async function runCommand(rt: AdminRuntime, name: string, args: Args): Promise<unknown> {
  const cmd = COMMANDS[name];
  if (!cmd) throw new UsageError(`unknown command: ${name}`);
  for (const r of cmd.required ?? [])
    if (args[r] === undefined) throw new UsageError(`missing --${r}`);
  return cmd.run(rt, args);
}
