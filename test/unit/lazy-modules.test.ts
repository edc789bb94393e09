/**
 * Importing the server does not load the packages only some servers use (src/media/sharp.ts,
 * src/mail/sender.ts): sharp (libvips) and nodemailer are loaded on first use, which every test
 * process and every server without mail or images is spared. Checked in a fresh Node process with
 * a module hook that names every module loaded; the first uses themselves (an image thumbnailed, a
 * default avatar drawn, a mail sent) are test/api/thumbnails, avatars and mail.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every module a child process loads, by package, as it runs `body` (an ES module's text). */
async function loadedPackages(t: Test, body: string): Promise<Set<string>> {
  const dir = t.testdir();
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(
    hooks,
    "import { writeSync } from 'node:fs';\n" +
      'export async function load(url, context, next) {\n' +
      "  writeSync(2, 'loaded ' + url + '\\n');\n" +
      '  return next(url, context);\n' +
      '}\n',
  );
  const register = path.join(dir, 'register.mjs');
  fs.writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const main = path.join(dir, 'main.mjs');
  fs.writeFileSync(main, body);
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', register, main], {
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const packages = new Set<string>();
  for (const line of stderr.split('\n')) {
    const m = /^loaded .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (m) packages.add(m[1]!);
  }
  return packages;
}

const importServer = `await import(${JSON.stringify(pathToFileURL(path.join(src, 'server.js')).href)});\n`;

t.test('importing the server loads neither sharp nor nodemailer', async (t) => {
  const loaded = await loadedPackages(t, importServer);
  // The hook sees the server's packages (it would pass on nothing seen otherwise).
  t.ok(loaded.has('zod'), 'zod, imported with the server, is seen');
  t.ok(loaded.has('pino'), 'pino too');
  t.notOk(loaded.has('sharp'), 'sharp is not loaded');
  t.notOk(loaded.has('nodemailer'), 'nodemailer is not loaded');
});

t.test('their getters load them', async (t) => {
  const loaded = await loadedPackages(
    t,
    importServer +
      `const { loadSharp } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'media/sharp.js')).href)});\n` +
      `const sharp = await loadSharp();\n` +
      `if (sharp.concurrency() !== 1) throw new Error('sharp: concurrency ' + sharp.concurrency());\n` +
      `if (sharp.cache().files.max !== 0) throw new Error('sharp: cache on');\n` +
      `const { loadSmtpTransport } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'mail/sender.js')).href)});\n` +
      `const { defaultConfig } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'config.js')).href)});\n` +
      `const make = await loadSmtpTransport({ ...defaultConfig(), smtpUrl: 'smtp://127.0.0.1:9' });\n` +
      `make().close();\n`,
  );
  t.ok(loaded.has('sharp'), 'sharp, configured (one thread, no cache)');
  t.ok(loaded.has('nodemailer'), 'nodemailer, with a transport made');
});
