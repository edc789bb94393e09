/**
 * Every shell command of README.md and docs/*.md (test/helpers/doc-commands.ts finds them: fenced
 * shell blocks, and inline `npm …`, `node …`, `manage …`, `scripts/…`) is accounted for here, so
 * that the docs' commands and flags cannot drift from the programs:
 *
 * - run for real: the operator's admin-tool blocks of docs/operations.md (create a realm and a
 *   user, the audit log, a backup and a restore with the server stopped, a realm moved to another
 *   server) against real servers with temporary data directories, and the Confab part of
 *   docs/clients.md's session (first start with the owner's settings, the credentials file, a
 *   user created through the tool), each then logged in with;
 * - checked by the real program's own argument parser, without running it (`--help` after the
 *   documented arguments: the option parser runs first and refuses an unknown command or flag,
 *   exit 2): the admin tool (`npm run manage`), the server (`npm start`), `npm run cluster`; a
 *   bench's name by the bench runner's own list, its flags by the capacity/soak parser;
 * - npm scripts that CI itself runs (`npm ci`, `npm test`, the build), checked to be in .ci/run
 *   or in the scripts it runs;
 * - the rest, that cannot run here (systemd, certbot, apt on a production host, the third-party
 *   clients), listed below with the reason. An entry of the list that no longer matches any
 *   command fails, so the list cannot outlive the docs.
 *
 * A command none of these accounts for fails the test.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { rawRequest } from '../helpers/api.js';
import { docCommands, extractCommands, type DocCommand } from '../helpers/doc-commands.js';

t.setTimeout(600_000);
// The two real runs below (their own directories, servers and ports) and the check of every
// command, whose --help runs go on meanwhile (it waits for the real runs before it counts what they
// ran), run at once.
t.jobs = 3;

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};
const CI = fs.readFileSync(path.join(REPO, '.ci/run'), 'utf8');
const read = (f: string) => fs.readFileSync(path.join(REPO, f), 'utf8');

/** Commands that cannot run in CI, by their words (joined by spaces), with the reason. */
const NOT_IN_CI: { match: RegExp; reason: string }[] = [
  {
    match: /^apt-get install /,
    reason: "installs packages on the host (CI installs its own from .ci/run's list)",
  },
  {
    match: /^(curl -fsSL https:\/\/nodejs\.org\/|tar -xJ -C \/opt$|ln -sfn? \/opt\/node)/,
    reason:
      "installs Node's build in /opt on a production host (CI's runtimes job installs Node from the npm registry into its Debian 13 root)",
  },
  {
    match: /^(adduser --system|git clone |cd \/opt\/confab$|chown -R root:root \/opt\/confab$)/,
    reason:
      "a production host's user and install directory in /opt (test/deploy/layout.test.ts starts the install directory's layout)",
  },
  {
    match: /^(install (-d )?-m 0[67][45]0 -g confab |\$EDITOR )/,
    reason: 'writes /etc/confab on a production host; an editor',
  },
  {
    match:
      /^(cp deploy\/confab\.service |systemctl (daemon-reload|enable|edit|restart|stop nginx|start nginx))/,
    reason:
      'systemd on a production host (the unit passes systemd-analyze verify and its command runs in test/deploy/layout.test.ts)',
  },
  {
    match: /^cat \/var\/lib\/confab\/first-owner\.txt$/,
    reason:
      "the service's credentials file on a production host (the same file is read below after a first start, and in test/api/first-run.test.ts)",
  },
  {
    match: /^(certbot |install -d \/var\/www\/letsencrypt$)/,
    reason:
      'certbot needs a public name and an ACME server (test/deploy/nginx.test.ts serves the challenge through the shipped nginx file)',
  },
  {
    match:
      /^(cp deploy\/nginx\/confab\.conf |ln -s \.\.\/sites-available\/confab |rm -f \/etc\/nginx\/|nginx -t$)/,
    reason:
      "nginx's configuration on a production host (test/deploy/nginx.test.ts runs the shipped file)",
  },
  {
    match: /^curl https:\/\/chat\.example\.com\/health$/,
    reason: 'a public name (/health is checked by test/api/observability.test.ts)',
  },
  {
    match: /^podman /,
    reason:
      "needs root and podman: CI's container job (scripts/container-check.sh) builds the image from the Dockerfile, runs it and reads the credentials file and runs the admin tool in it",
  },
  {
    match: /^(python3 -c |printf \[api\]|chmod 600 iago\.zuliprc$|export PYTHONPATH=)/,
    reason:
      'the third-party clients, whose sources are fetched by hand (docs/clients.md); not installed in CI',
  },
  {
    match: /^npm run (fuzz|emoji)$/,
    reason:
      'by hand: the fuzz files run in the suite on a fixed seed (npm run fuzz runs them longer); npm run emoji regenerates a committed source file',
  },
  {
    match: /^scripts\/runtime-check\.sh --node 26\.\d+\.\d+$/,
    reason:
      "by hand: Node 26 has no uWebSockets.js build on the npm registry, so the start refuses there (CI's runtimes job checks Node 22 and 24)",
  },
  {
    match: /^npx tap dist\/test\/api\/fuzz-\*\.test\.js$/,
    reason: 'the fuzz files by hand (they run in the suite)',
  },
];

/** npm's own commands and the npm scripts CI runs, with where CI runs them. */
const RUN_BY_CI: { match: RegExp; file: string; contains: string }[] = [
  { match: /^npm ci( --omit=dev)?$/, file: '.ci/run', contains: 'start install npm ci' },
  { match: /^npm prune --omit=dev$/, file: 'Dockerfile', contains: 'prune --omit=dev' },
  { match: /^npm test$/, file: '.ci/run', contains: 'start suite npm test' },
  { match: /^npm run build$/, file: 'scripts/prepare.mjs', contains: "'-p', 'web'" },
  { match: /^scripts\/build-web\.mjs$/, file: 'scripts/prepare.mjs', contains: 'build-web.mjs' },
  { match: /^npm run check$/, file: '.ci/run', contains: 'eslint . && npx --no-install prettier' },
  {
    match: /^(npm run fetch-nats-server|scripts\/fetch-nats-server\.mjs)$/,
    file: '.ci/run',
    contains: 'node scripts/fetch-nats-server.mjs',
  },
  { match: /^scripts\/runtime-check\.sh$/, file: '.ci/run', contains: 'scripts/runtime-check.sh' },
  {
    match: /^scripts\/container-check\.sh$/,
    file: '.ci/run',
    contains: 'scripts/container-check.sh',
  },
  { match: /^scripts\/fuzz\.mjs$/, file: 'package.json', contains: 'node scripts/fuzz.mjs' },
  {
    match: /^scripts\/tap-ready\.mjs$/,
    file: 'package.json',
    contains: 'node scripts/tap-ready.mjs && tap',
  },
  {
    match: /^node dist\/src\/cluster\/main\.js$/,
    file: 'test/cluster/seed.test.ts',
    contains: "'cluster', 'main.js'",
  },
];

/** What a `npm …` command runs: the script's last command with the arguments, or null. */
function npmTarget(words: string[]): { script: string; argv: string[] } | null {
  if (words[0] !== 'npm') return null;
  let i = 2;
  let script: string;
  if (words[1] === 'start' || words[1] === 'test') {
    script = words[1];
  } else if (words[1] === 'run') {
    while (words[i] === '-s' || words[i] === '--silent') i++;
    script = words[i++]!;
  } else {
    return null;
  }
  const body = pkg.scripts[script];
  if (body === undefined) throw new Error(`no npm script ${script}`);
  let rest = words.slice(i);
  if (rest[0] === '--') rest = rest.slice(1);
  const last = body.split('&&').pop()!.trim().split(/\s+/);
  return { script, argv: [...last, ...rest] };
}

const EMPTY_ENV_FILE = path.join(
  fs.mkdtempSync(path.join(os.tmpdir(), 'confab-docs-')),
  'confab.env',
);
fs.writeFileSync(EMPTY_ENV_FILE, '');
t.teardown(() => fs.rmSync(path.dirname(EMPTY_ENV_FILE), { recursive: true, force: true }));

/** The documented arguments with placeholders made concrete; null for a command's form. */
function concrete(args: string[]): string[] | null {
  const out: string[] = [];
  for (let w of args) {
    if (w === '…' || w === '...' || w === '[options]') continue;
    w = w.replace(/^\[/, '').replace(/\]$/, '');
    if (/^<.*>$/.test(w)) {
      // <command>, <name>: a form, not a command; <subdomain> as an option's value: a value.
      if (out.length === 0 || !out[out.length - 1]!.startsWith('--')) return null;
      w = w.slice(1, -1);
    }
    if (/^[A-Z]$/.test(w)) w = '1'; // N, M
    // Node 20 reads a script's --env-file itself too (and exits 9 when the file is missing).
    if (out[out.length - 1] === '--env-file') w = EMPTY_ENV_FILE;
    out.push(w);
  }
  return out;
}

/** `node ...args` in the repository, without the test runner's hooks or a DATA_DIR. */
function nodeRun(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const e: NodeJS.ProcessEnv = { ...process.env };
  delete e.NODE_OPTIONS;
  delete e.DATA_DIR;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: REPO, env: e });
    let stderr = '';
    p.stdout.resume();
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, stderr }));
  });
}

/**
 * The programs' --help runs, two at a time: each is a node start (most of a second of CPU, about
 * fifty of them), run while the checks before them are made and the real runs above go on.
 */
const HELP_RUNS_AT_ONCE = 2;
let helpRuns = 0;
const helpWaiting: (() => void)[] = [];
async function helpRun(args: string[]): Promise<{ status: number | null; stderr: string }> {
  // A finished run hands its place to the next waiting one (which does not count itself again).
  if (helpRuns < HELP_RUNS_AT_ONCE) helpRuns++;
  else await new Promise<void>((resolve) => helpWaiting.push(resolve));
  try {
    return await nodeRun(args);
  } finally {
    const next = helpWaiting.shift();
    if (next) next();
    else helpRuns--;
  }
}

let benchNames: Promise<string[]> | undefined;
function benchList(): Promise<string[]> {
  benchNames ??= helpRun(['dist/bench/run.js']).then(
    (r) => /<([^>]+)>/.exec(r.stderr)?.[1]?.split('|') ?? [],
    () => [],
  );
  return benchNames;
}

async function checkBench(t: Test, argv: string[], where: string): Promise<void> {
  const names = await benchList();
  const [name, ...flags] = argv;
  t.ok(names.includes(name!), `${where}: bench ${name} exists`);
  if (name === 'capacity' || name === 'soak') {
    const { parseCapacityArgs } = (await import('../../bench/capacity.bench.js')) as {
      parseCapacityArgs: (a: string[]) => unknown;
    };
    t.doesNotThrow(() => parseCapacityArgs(flags), `${where}: the ${name} bench's flags parse`);
  } else if (name === 'compare') {
    t.equal(flags.filter((f) => !f.startsWith('--')).length, 2, `${where}: two files`);
  } else {
    const takes = name === 'cluster' ? ['--quick', '--pauses'] : ['--quick'];
    t.same(
      flags.filter((f) => !takes.includes(f)),
      [],
      `${where}: the ${name} bench takes ${takes.join(', ')} only`,
    );
  }
}

/** A check made later, in the documents' order; the run it looks at started when it was made. */
type Check = (t: Test) => void | Promise<void>;

/**
 * The check of `argv` (a node command line) by its program's own parser, its run started now;
 * null if the program is not ours.
 */
const parsed = new Map<string, Promise<string>>();
function parseCheck(argv: string[], where: string): Check | null {
  if (argv[0] !== 'node') return null;
  // Node's own flags (npm start's --min-semi-space-size=16) come before the program.
  let p = 1;
  while (argv[p]?.startsWith('-')) p++;
  const program = argv[p]!;
  const args = concrete(argv.slice(p + 1));
  if (args === null) {
    return (t) => {
      t.ok(fs.existsSync(path.join(REPO, program)), `${where}: a form of ${program}, which exists`);
    };
  }
  if (program === 'dist/bench/run.js') {
    if (args.length === 0) return () => {};
    void benchList();
    return (t) => checkBench(t, args, where);
  }
  if (
    program !== 'dist/src/manage.js' &&
    program !== 'dist/src/main.js' &&
    program !== 'dist/src/cluster/cli.js'
  )
    return null;
  if (program !== 'dist/src/main.js' && args.length === 0) {
    return (t) => {
      t.ok(fs.existsSync(path.join(REPO, program)), `${where}: ${program} (its name) exists`);
    };
  }
  const key = [program, ...args].join('\0');
  let answer = parsed.get(key);
  if (answer === undefined) {
    answer = helpRun([program, ...args, '--help']).then(
      (r) => (r.status === 0 ? '' : `exit ${String(r.status)}: ${r.stderr.split('\n')[0]}`),
      (err: Error) => `not run: ${err.message}`,
    );
    parsed.set(key, answer);
  }
  const answered = answer;
  return async (t) => {
    t.equal(await answered, '', `${where}: ${program} ${args.join(' ')} parses`);
  };
}

const commands = docCommands(REPO);
const key = (c: DocCommand) => c.words.join(' ');
const at = (c: DocCommand) => `${c.file}:${c.line}`;

// Filled by the real runs below: the commands they ran.
const ranForReal = new Set<DocCommand>();

/** The documented command of `file` whose words match `re` (exactly one). */
function documented(t: Test, file: string, re: RegExp): DocCommand {
  const found = commands.filter((c) => c.file === file && !c.inline && re.test(key(c)));
  t.equal(found.length, 1, `${file} has one command matching ${String(re)}`);
  if (found.length === 0) throw new Error(`${file}: no command matching ${String(re)}`);
  ranForReal.add(found[0]!);
  return found[0]!;
}

/** A clean environment for npm (no test runner hooks). */
function shellEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith('TAP') || k.startsWith('npm_')) delete env[k];
  return env;
}

function sh(
  line: string,
  env: Record<string, string>,
): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-c', line], { cwd: REPO, env: shellEnv(env) });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

type Server = { url: string; stop: () => Promise<void> };

/** A shell line that starts the server in the foreground, run until stopped (SIGTERM). */
async function serve(t: Test, line: string, env: Record<string, string>): Promise<Server> {
  const p = spawn('bash', ['-c', line], {
    cwd: REPO,
    env: shellEnv(env),
    detached: true,
  });
  let out = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  p.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const closed = new Promise<void>((resolve) => p.on('close', () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-p.pid!, s);
    } catch {
      // gone
    }
  };
  t.teardown(() => signal('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    p.stdout.on('data', look);
    p.stderr.on('data', look);
    p.on('close', (code) => reject(new Error(`${line} exited (${String(code)}):\n${out}`)));
  });
  return {
    url,
    stop: async () => {
      signal('SIGTERM');
      await closed;
    },
  };
}

function login(url: string, host: string, email: string, password: string) {
  return rawRequest(url, {
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email, password }).toString(),
  });
}

t.test('finding commands: blocks, continuations, comments, separators, inline spans', (t) => {
  const md = [
    'Run `npm run -s manage -- audit-log --realm eng` or `npm test`; not `node::Thing`, `npm`.',
    '```sh',
    "sudo -u confab npm run manage -- x --name 'A B' \\",
    '    --to /b/$(date +%F) < pw.txt   # a comment',
    'a && FOO=1 b | c; d &',
    '```',
    '```ini',
    'npm run nothing',
    '```',
  ].join('\n');
  const found = extractCommands('x.md', md).map((c) => [c.line, c.words, c.env]);
  t.same(found, [
    [1, ['npm', 'run', '-s', 'manage', '--', 'audit-log', '--realm', 'eng'], {}],
    [1, ['npm', 'test'], {}],
    [3, ['npm', 'run', 'manage', '--', 'x', '--name', 'A B', '--to', '/b/$(date +%F)'], {}],
    [5, ['a'], {}],
    [5, ['b'], { FOO: '1' }],
    [5, ['c'], {}],
    [5, ['d'], {}],
  ]);
  t.end();
});

const operations = t.test(
  'docs/operations.md: the admin tool as an operator runs it, for real',
  async (t) => {
    const dir = t.testdir();
    const data = path.join(dir, 'data');
    const envFile = path.join(dir, 'confab.env');
    fs.writeFileSync(
      envFile,
      `DATA_DIR=${data}\nPORT=0\nHOST=127.0.0.1\nEXTERNAL_HOST=chat.example.test\n` +
        'FIRST_OWNER_EMAIL=op@example.test\n',
    );
    fs.writeFileSync(path.join(dir, 'boss-pw.txt'), 'boss-password-1\n');
    fs.writeFileSync(path.join(dir, 'ann-pw.txt'), 'ann-password-1\n');
    // The production paths, moved into the test's directory; `sudo -u confab` dropped (the test's
    // user owns everything here); `systemctl stop/start confab` stop and start the test's server.
    const local = (line: string) =>
      line
        .replace(/sudo -u confab /g, '')
        .replace(/\/etc\/confab\/confab\.env/g, envFile)
        .replace(/\/var\/lib\/confab-backups\/(\$\([^)]*\)|\S+)/g, path.join(dir, 'backups', 'b1'))
        .replace(/\/var\/lib\/confab\b/g, data)
        .replace(/\/var\/tmp\//g, `${dir}/`)
        .replace(/-o confab -g confab /g, '')
        .replace(/ ([\w-]*pw\.txt)\b/g, (_, f: string) => ` ${path.join(dir, f)}`);
    const run = async (c: DocCommand, env: Record<string, string> = {}) => {
      const line = local(c.text);
      const r = await sh(line, env);
      t.equal(r.status, 0, `${at(c)}: ${line}`, { stderr: r.err.slice(0, 2000) });
      return r;
    };
    // The unit's command (docs/operations.md): the server with the settings file.
    const start = () => serve(t, `node dist/src/main.js --env-file ${envFile}`, {});

    // The other server, where the realm moves at the end (its own directory), starts meanwhile.
    const other = path.join(dir, 'other');
    const otherStarting = serve(t, 'node dist/src/main.js', {
      DATA_DIR: other,
      PORT: '0',
      HOST: '127.0.0.1',
      EXTERNAL_HOST: 'chat.example.test',
    });
    otherStarting.catch(() => {}); // awaited below, where a failed start fails the test
    let server = await start();
    const host = 'eng.chat.example.test';
    await run(documented(t, 'docs/operations.md', /manage -- --env-file \S+ create-realm /));
    await run(documented(t, 'docs/operations.md', /manage -- --env-file \S+ create-user /));
    const audit = await run(documented(t, 'docs/operations.md', /manage -- audit-log /), {
      DATA_DIR: data,
    });
    t.match(JSON.parse(audit.out), { entries: Array }, 'the audit log is one JSON object');
    fs.mkdirSync(path.join(dir, 'backups'));
    await run(documented(t, 'docs/operations.md', /manage -- --env-file \S+ backup --to \S+\$/));

    // The restore block: the service stopped, the directory moved aside, the backup restored.
    const stopLine = documented(t, 'docs/operations.md', /^systemctl stop confab$/);
    t.ok(stopLine, 'systemctl stop confab: the server stopped');
    await server.stop();
    await run(documented(t, 'docs/operations.md', /^mv \/var\/lib\/confab /));
    await run(documented(t, 'docs/operations.md', /^install -d -o confab .* \/var\/lib\/confab$/));
    await run(documented(t, 'docs/operations.md', /manage -- --env-file \S+ restore --from /));
    documented(t, 'docs/operations.md', /^systemctl start confab$/);
    server = await start();
    const ann = await login(server.url, host, 'ann@example.com', 'ann-password-1');
    t.equal(ann.status, 200, 'the user created by the tool logs in to the restored server');
    const boss = await login(server.url, host, 'boss@example.com', 'boss-password-1');
    t.equal(boss.status, 200, 'so does the owner of the realm it created');

    // Moving the realm: exported here, imported on another server.
    const exported = await run(
      documented(t, 'docs/operations.md', /manage -- export-realm --realm eng /),
      { DATA_DIR: data },
    );
    t.match(JSON.parse(exported.out), { credentials: true });
    // This server stops while the realm goes into the other one.
    const stopped = server.stop();
    const otherServer = await otherStarting;
    await run(documented(t, 'docs/operations.md', /manage -- import-realm --from /), {
      DATA_DIR: other,
    });
    const moved = await login(otherServer.url, host, 'ann@example.com', 'ann-password-1');
    t.equal(moved.status, 200, 'the moved password logs in on the other server');
    t.equal(moved.body.api_key, ann.body.api_key, 'with the moved API key');
    await Promise.all([stopped, otherServer.stop()]);
  },
);

const clients = t.test("docs/clients.md: Confab's part of the session, for real", async (t) => {
  const dir = t.testdir();
  const data = path.join(dir, 'try');
  const local = (line: string) => line.replace(/\/tmp\/try/g, data).replace(/9101/g, '0');
  const exported = documented(t, 'docs/clients.md', /^export DATA_DIR=/);
  const env: Record<string, string> = { HOST: '127.0.0.1' };
  for (const w of shellWordsOf(local(exported.text)).slice(1)) {
    const [k, v] = w.split('=') as [string, string];
    env[k] = v;
  }
  t.equal(env.DATA_DIR, data);
  const startLine = documented(t, 'docs/clients.md', /^npm start$/);
  const server = await serve(t, startLine.text, env);
  const cat = documented(t, 'docs/clients.md', /^cat \/tmp\/try\/first-owner\.txt$/);
  const file = await sh(local(cat.text), env);
  t.equal(file.status, 0, `${at(cat)}: the credentials file is there`);
  const password = /^password=(\S+)$/m.exec(file.out)?.[1];
  t.ok(password, 'it has the owner’s password');
  const host = new URL(server.url).host;
  const owner = await login(server.url, host, 'iago@example.com', password ?? '');
  t.equal(owner.status, 200, 'iago logs in with it');

  const create = documented(t, 'docs/clients.md', /manage -- create-user /);
  documented(t, 'docs/clients.md', /^echo another password$/);
  // The documented pipeline as written: `echo … | npm run -s manage -- create-user …`.
  const pipeline = commands.filter((c) => c.file === 'docs/clients.md' && c.line === create.line);
  const line = read('docs/clients.md')
    .split('\n')
    .slice(create.line - 1, create.line + 1)
    .join('\n')
    .replace(/#.*$/gm, '');
  t.equal(pipeline.length, 2, 'echo | create-user');
  const r = await sh(local(line), env);
  t.equal(r.status, 0, `${at(create)}: create-user`, { stderr: r.err });
  const othello = await login(server.url, host, 'othello@example.com', 'another password');
  t.equal(othello.status, 200, 'othello logs in with the password given on stdin');
  await server.stop();
});

/** Both real runs ended: ranForReal holds what they ran. */
const realRuns = Promise.all([operations, clients]);

function shellWordsOf(line: string): string[] {
  return line.split(/\s+/).filter((w) => w !== '');
}

/**
 * How a command no list above names is accounted for: its program's parser (the run started
 * now), or null (unaccounted).
 */
function parserCheck(c: DocCommand, where: string): Check | null {
  if (c.words[0] === 'manage' || c.words[0] === 'confab-manage')
    return parseCheck(['node', 'dist/src/manage.js', ...c.words.slice(1)], where);
  if (c.words[0] === 'scripts/' || c.words[0]!.startsWith('scripts/')) return null;
  let target: { script: string; argv: string[] } | null;
  try {
    target = npmTarget(c.words);
  } catch (err) {
    const message = (err as Error).message;
    return (t) => {
      t.fail(`${where}: ${message}`);
    };
  }
  return parseCheck(target ? target.argv : c.words, where);
}

t.test('every command of the docs is run, parsed by its program, or listed', async (t) => {
  t.ok(commands.length > 100, `${commands.length} commands found in README.md and docs/*.md`);
  const used = new Set<RegExp>();
  const unaccounted: string[] = [];
  // Made in the documents' order, the programs' runs started at once; checked in that order once
  // the real runs above have ended (they say which commands they ran).
  const checks: Check[] = [];
  for (const c of commands) {
    const words = key(c);
    const where = `${at(c)} \`${c.text}\``;
    const notHere = NOT_IN_CI.find((n) => n.match.test(words));
    if (notHere) {
      used.add(notHere.match);
      continue;
    }
    const byCi = RUN_BY_CI.find((n) => n.match.test(words));
    if (byCi) {
      used.add(byCi.match);
      checks.push((t) => {
        t.ok(read(byCi.file).includes(byCi.contains), `${where}: run by ${byCi.file}`);
      });
      continue;
    }
    const check = parserCheck(c, where);
    checks.push((t) => {
      if (ranForReal.has(c) && !/^(npm|node)$/.test(c.words[0]!)) return;
      if (check) return check(t);
      unaccounted.push(where);
    });
  }
  await realRuns;
  for (const check of checks) await check(t);
  t.same(unaccounted, [], 'no command of the docs is left unaccounted for');
  for (const n of [...NOT_IN_CI, ...RUN_BY_CI])
    t.ok(used.has(n.match), `${String(n.match)} still matches a command of the docs`);
  // Not the CI's own list: the scripts CI runs are the ones named above.
  t.ok(CI.includes('npm test'), '.ci/run runs the suite');
});
