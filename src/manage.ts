/**
 * `npm run manage -- [--env-file FILE] <command> [options]`: the admin tool (docs/operations.md
 * "Admin tool"; the commands are in src/admin/commands.ts).
 *
 * It takes the server's settings from the same place the server does (the environment, or the
 * file given with --env-file), so it finds the same data directory and prints the same links.
 * With a server running on that directory, the command runs inside the server (admin socket);
 * otherwise the tool opens the directory itself, under the directory's lock. Passwords are read
 * from a prompt, standard input (--password-stdin) or an environment variable
 * (--password-env NAME), never from the command line. Output: one JSON object on stdout;
 * failures: one JSON object on stderr, exit status 1 (2 for a bad command line).
 *
 * Refused before anything else (src/admin/data-dir.ts): a data directory that does not exist or
 * holds no database (only create-realm may start a new one), and a user other than the data
 * directory's owner (files the tool made would be the wrong user's, and the server could not use
 * them). Every command it runs is in the audit log, as the operating-system user who ran it.
 *
 * Each path loads what it needs, when it gets there (docs/benchmarks.md "The admin tool's
 * start"): --help and a bad command line only the command table (src/admin/commands.ts); a
 * command sent to a running server the settings and the admin socket's client as well; only a
 * command the tool runs itself the logger, and on the data directory the store, the realm actors
 * and the renderer.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { COMMANDS, commandHelp, type AdminCommand, type Args } from './admin/commands.js';
import { checkDataDir, DataDirRefused } from './admin/data-dir.js';
import { warnIfStale } from './build-check.js';
import { UsageError } from './admin/errors.js';
import type { AdminRequest, AdminResponse } from './admin/socket-client.js';
import type { ToolOrigin } from './lib/audit.js';
import { levelFromEnv } from './observability/log-level.js';
import type { ServerConfig } from './config.js';
import type { DataDirLock } from './storage/data-lock.js';

const USAGE = [
  'usage: npm run manage -- [--env-file FILE] <command> [options]',
  '       npm run manage -- <command> --help',
  '',
  'Commands:',
  ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(20)} ${c.summary}`),
  '',
  'The settings (DATA_DIR, EXTERNAL_HOST, ...) come from the environment or --env-file FILE,',
  'as for the server. Output is one JSON object.',
].join('\n');

/** Splits off --env-file (anywhere) and the command name (the first other word). */
function splitArgv(argv: readonly string[]): {
  envFile: string | undefined;
  command: string | undefined;
  rest: string[];
} {
  let envFile: string | undefined;
  let command: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--env-file') {
      envFile = argv[++i];
      if (envFile === undefined) throw new UsageError('--env-file needs a file');
    } else if (a.startsWith('--env-file=')) {
      envFile = a.slice('--env-file='.length);
    } else if (command === undefined && !a.startsWith('-')) {
      command = a;
    } else {
      rest.push(a);
    }
  }
  return { envFile, command, rest };
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c: string) => (text += c));
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    let value = '';
    const done = (err: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003') return done(new UsageError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function readPassword(values: Args): Promise<string> {
  const envName = values['password-env'];
  if (typeof envName === 'string') {
    const v = process.env[envName];
    if (v === undefined || v === '')
      throw new UsageError(`the environment variable ${envName} is not set`);
    return v;
  }
  if (values['password-stdin'] === true) {
    const line = (await readStdin()).split(/\r?\n/)[0] ?? '';
    if (line === '') throw new UsageError('no password on standard input');
    return line;
  }
  if (process.stdin.isTTY) {
    const first = await promptHidden('Password: ');
    const again = await promptHidden('Password (again): ');
    if (first !== again) throw new UsageError('the passwords differ');
    return first;
  }
  throw new UsageError(
    'this command needs a password: give it on standard input (--password-stdin), in an ' +
      'environment variable (--password-env NAME), or run the tool in a terminal to be asked',
  );
}

/** Who runs the tool, for the audit log: the login behind sudo too. */
function toolOrigin(): ToolOrigin {
  const user = os.userInfo().username;
  const behind = process.env.SUDO_USER;
  return {
    via: 'admin_tool',
    os_user:
      behind !== undefined && behind !== '' && behind !== user ? `${behind} (as ${user})` : user,
  };
}

/**
 * Runs a command on the data directory itself, under its lock (no server running there). A lock
 * another process holds is answered as a refusal (code LOCKED).
 */
async function runDirect(config: ServerConfig, req: AdminRequest): Promise<AdminResponse> {
  const { DataDirLock, DataDirLockedError } = await import('./storage/data-lock.js');
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(config.dataDir, 'admin tool');
  } catch (err) {
    if (err instanceof DataDirLockedError) return { ok: false, error: err.message, code: 'LOCKED' };
    throw err;
  }
  try {
    if (req.command === 'restore') {
      const from = req.args.from;
      if (typeof from !== 'string') throw new UsageError('missing --from');
      const { restoreDataDir } = await import('./admin/backup.js');
      const { recordRestore } = await import('./admin/tool-audit.js');
      const result = await restoreDataDir(from, config.dataDir);
      recordRestore(config.dataDir, from, req.origin);
      return { ok: true, result };
    }
    const [{ Store }, { RealmRegistry }, { RenderPool }, { handleAdminRequest }] =
      await Promise.all([
        import('./storage/store.js'),
        import('../actors/registry.js'),
        import('../workers/pool.js'),
        import('./admin/service.js'),
      ]);
    const store = Store.open(config.dataDir, { backgroundCheckpoint: false });
    // No server runs: the realm actors' events have no audience.
    const realms = new RealmRegistry(store, { publish: () => {} });
    const renderer = new RenderPool();
    try {
      return await handleAdminRequest({ config, store, realms, renderer, queues: null }, req);
    } finally {
      realms.closeAll();
      await renderer.close();
      store.close();
    }
  } finally {
    lock.release();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  // What the tool writes in a data directory (a new database, the lock, imported uploads) is as
  // private as what the server writes there (src/main.ts): 0700 directories, 0600 files.
  process.umask(0o077);
  const { envFile, command, rest } = splitArgv(argv);
  if (command === undefined || command === 'help') {
    const topic = command === 'help' ? rest.find((a) => !a.startsWith('-')) : undefined;
    const cmd = topic === undefined ? undefined : COMMANDS[topic];
    if (topic !== undefined && !cmd) throw new UsageError(`unknown command: ${topic}`);
    process.stdout.write((cmd ? commandHelp(topic!, cmd) : USAGE) + '\n');
    return command === undefined && !rest.includes('--help') ? 2 : 0;
  }
  const cmd: AdminCommand | undefined = COMMANDS[command];
  if (!cmd) throw new UsageError(`unknown command: ${command}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      ...cmd.options,
      help: { type: 'boolean' },
      ...(cmd.password
        ? { 'password-stdin': { type: 'boolean' }, 'password-env': { type: 'string' } }
        : {}),
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(commandHelp(command, cmd) + '\n');
    return 0;
  }
  warnIfStale();
  const { configFromEnv, envWithFile } = await import('./config.js');
  const env = envWithFile(envFile);
  const config = configFromEnv(env);
  // LOG_LEVEL is checked here; the logger itself (pino) is loaded only for a command that runs
  // in this process: one sent to the running server logs nothing here.
  const level = levelFromEnv(env.LOG_LEVEL) ?? 'warn';
  const startLogging = async () =>
    (await import('./observability/log.js')).configureLogging({ destination: 2, level });

  const args: Args = {};
  for (const [k, v] of Object.entries(values)) {
    if (k !== 'help' && k !== 'password-stdin' && k !== 'password-env' && v !== undefined)
      args[k] = v;
  }
  for (const r of cmd.required ?? [])
    if (args[r] === undefined) throw new UsageError(`missing --${r}`);
  // Paths are the caller's: a running server (another working directory) gets them absolute.
  for (const k of cmd.paths ?? []) if (typeof args[k] === 'string') args[k] = path.resolve(args[k]);
  if (cmd.password === 'required' || (cmd.password === 'optional' && !args['without-password'])) {
    args.password = await readPassword(values);
  }
  if (args['content-stdin'] === true) {
    if (typeof args.content === 'string') throw new UsageError('give --content or --content-stdin');
    args.content = await readStdin();
  }
  const req: AdminRequest = { command, args, origin: toolOrigin() };
  if (cmd.runLocal) {
    // Runs in this process, on the settings alone (check-config).
    await startLogging();
    const result = await cmd.runLocal(config, args);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return (result as { ok?: boolean }).ok === false ? 1 : 0;
  }
  checkDataDir(
    config.dataDir,
    command === 'create-realm' || command === 'restore' ? 'may-create' : 'must-exist',
  );
  const { askServer } = await import('./admin/socket-client.js');

  let response = cmd.offline ? null : await askServer(config.dataDir, req);
  if (response === null) {
    if (cmd.offline && (await askServer(config.dataDir, { command: 'queue-stats', args: {} }))) {
      throw new UsageError(`${command} needs the server stopped: it runs on ${config.dataDir}`);
    }
    await startLogging();
    response = await runDirect(config, req);
  }
  if (response.ok) {
    process.stdout.write(JSON.stringify(response.result, null, 2) + '\n');
    return 0;
  }
  process.stderr.write(JSON.stringify({ error: response.error, code: response.code }) + '\n');
  return response.code === 'USAGE' ? 2 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err)) {
      // parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed options.
      process.stderr.write(
        JSON.stringify({ error: err.message, code: 'USAGE' }) +
          '\n(npm run manage -- <command> --help lists its options)\n',
      );
      process.exit(2);
    }
    if (err instanceof DataDirRefused) {
      process.stderr.write(JSON.stringify({ error: err.message, code: err.code }) + '\n');
      process.exit(1);
    }
    process.stderr.write(
      JSON.stringify({ error: err instanceof Error ? err.message : String(err), code: 'ERROR' }) +
        '\n',
    );
    process.exit(1);
  },
);
