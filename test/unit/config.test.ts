/**
 * Settings that no longer exist (src/config.ts REMOVED_SETTINGS): accepted and ignored, and named
 * so that the start can warn about them.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { configFromEnv, defaultConfig, removedSettingsIn } from '../../src/config.js';

t.test('the HTTP guard settings are ignored and named', (t) => {
  const env = { HTTP_GUARD: 'on', HTTP_MAX_CONNECTIONS: '3', PORT: '9999' };
  const config = configFromEnv(env);
  t.equal(config.port, 9999, 'the other settings are read');
  t.notOk('httpGuard' in config, 'no guard setting is left');
  t.same(Object.keys(config).sort(), Object.keys(configFromEnv({ PORT: '9999' })).sort());
  t.same(removedSettingsIn(env), ['HTTP_GUARD', 'HTTP_MAX_CONNECTIONS']);
  t.same(removedSettingsIn({ HTTP_GUARD_POLLS: 'auto' }), ['HTTP_GUARD_POLLS']);
  t.same(removedSettingsIn({}), []);
  t.notOk('httpGuard' in defaultConfig());
  t.end();
});

t.test('COMMIT_SPACING_MS: the group commit spacing, 5 ms unless set, 0 to 100', (t) => {
  t.equal(configFromEnv({}).commitSpacingMs, 5);
  t.equal(configFromEnv({ COMMIT_SPACING_MS: '0' }).commitSpacingMs, 0);
  t.equal(configFromEnv({ COMMIT_SPACING_MS: '20' }).commitSpacingMs, 20);
  for (const bad of ['-1', '101', '2.5', 'x', '05']) {
    t.throws(() => configFromEnv({ COMMIT_SPACING_MS: bad }), /COMMIT_SPACING_MS/, bad);
  }
  t.end();
});

t.test('SHUTDOWN_GRACE_MS: the shutdown grace, 1500 ms unless set, 0 to 60000', (t) => {
  t.equal(configFromEnv({}).shutdownGraceMs, 1500);
  t.equal(configFromEnv({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs, 0);
  t.equal(configFromEnv({ SHUTDOWN_GRACE_MS: '250' }).shutdownGraceMs, 250);
  t.equal(configFromEnv({ SHUTDOWN_GRACE_MS: '60000' }).shutdownGraceMs, 60_000);
  for (const bad of ['-1', '60001', '100000', '1.5', '1e3', 'x', '', ' 100']) {
    t.throws(
      () => configFromEnv({ SHUTDOWN_GRACE_MS: bad }),
      {
        name: 'SettingsError',
        message:
          'bad environment: SHUTDOWN_GRACE_MS: SHUTDOWN_GRACE_MS is a whole number of milliseconds, 0 to 60000 (the default is 1500; 0: stop listening at once)',
      },
      JSON.stringify(bad),
    );
  }
  t.end();
});

t.test('EXPORT_TIME_LIMIT: a realm export run’s limit, seconds, an hour unless set', (t) => {
  t.equal(configFromEnv({}).exportTimeLimitMs, 3_600_000);
  t.equal(configFromEnv({ EXPORT_TIME_LIMIT: '5' }).exportTimeLimitMs, 5000);
  for (const bad of ['0', '-1', '2.5', 'x', '05']) {
    t.throws(() => configFromEnv({ EXPORT_TIME_LIMIT: bad }), /EXPORT_TIME_LIMIT/, bad);
  }
  t.end();
});

t.test(
  'LOG_REQUESTS: errors unless set; all, errors, off, and the older 1/true and 0/false',
  (t) => {
    t.equal(configFromEnv({}).logRequests, 'errors', "npm start's default");
    t.equal(defaultConfig().logRequests, 'off', "the library's (tests, benches)");
    const cases: [string, string][] = [
      ['all', 'all'],
      ['errors', 'errors'],
      ['off', 'off'],
      ['1', 'all'],
      ['true', 'all'],
      ['0', 'off'],
      ['false', 'off'],
    ];
    for (const [value, mode] of cases)
      t.equal(configFromEnv({ LOG_REQUESTS: value }).logRequests, mode);
    t.throws(() => configFromEnv({ LOG_REQUESTS: 'some' }), /LOG_REQUESTS/);
    t.equal(configFromEnv({}).slowRequestMs, 1000);
    t.equal(configFromEnv({ LOG_SLOW_MS: '250' }).slowRequestMs, 250);
    t.throws(() => configFromEnv({ LOG_SLOW_MS: '-1' }), /LOG_SLOW_MS/);
    t.end();
  },
);

t.test('EXTERNAL_HOST: a host name with an optional port, nothing else', (t) => {
  for (const good of ['chat.example.com', 'localhost:9991', '127.0.0.1', '[::1]:9991', 'a-b.c'])
    t.equal(configFromEnv({ EXTERNAL_HOST: good }).externalHost, good, good);
  for (const bad of [
    'https://chat.example.com',
    'chat.example.com/',
    'chat.example.com/confab',
    'chat example.com',
    'chat.example.com:',
    '-chat.example.com',
    '',
  ]) {
    t.throws(
      () => configFromEnv({ EXTERNAL_HOST: bad }),
      { name: 'SettingsError', message: /^bad environment: EXTERNAL_HOST: .*no scheme/ },
      JSON.stringify(bad),
    );
  }
  t.end();
});

t.test('TRUSTED_PROXIES and ADDRESS_LIMITS_EXEMPT: each entry checked, the setting named', (t) => {
  const config = configFromEnv({
    TRUSTED_PROXIES: ' 127.0.0.1, ::1,10.0.0.0/8 ',
    ADDRESS_LIMITS_EXEMPT: '192.168.0.0/16',
  });
  t.same(config.trustedProxies, ['127.0.0.1', '::1', '10.0.0.0/8']);
  t.same(config.addressLimitsExempt, ['192.168.0.0/16']);
  t.same(configFromEnv({ ADDRESS_LIMITS_EXEMPT: '' }).addressLimitsExempt, [], 'empty: none');
  for (const name of ['TRUSTED_PROXIES', 'ADDRESS_LIMITS_EXEMPT']) {
    for (const bad of ['nginx', '10.0.0.0/33', '127.0.0.1,proxy.local', '::1/129']) {
      t.throws(
        () => configFromEnv({ [name]: bad }),
        { name: 'SettingsError', message: new RegExp(`^bad environment: ${name}: `) },
        `${name}=${bad}`,
      );
    }
  }
  t.end();
});

t.test('MAX_REQUEST_BYTES: bytes, at least 1 MiB', (t) => {
  t.equal(configFromEnv({}).maxRequestBytes, 4194304);
  t.equal(configFromEnv({ MAX_REQUEST_BYTES: '1048576' }).maxRequestBytes, 1048576);
  for (const bad of ['0', '1000', '4m', '-1', '99999999999'])
    t.throws(
      () => configFromEnv({ MAX_REQUEST_BYTES: bad }),
      /MAX_REQUEST_BYTES is a number of bytes, at least 1048576/,
      bad,
    );
  t.end();
});

t.test('DATA_DIR under /proc, /sys or /dev is refused, through a symbolic link too', (t) => {
  for (const dir of ['/proc/confab/data', '/sys/confab', '/dev/confab/data', '/proc', '/dev']) {
    t.throws(
      () => configFromEnv({ DATA_DIR: dir }),
      {
        message: `bad environment: DATA_DIR: ${dir} is under /${dir.split('/')[1]}, a file system of the kernel's, not a disk: set DATA_DIR to a directory on a disk`,
      },
      dir,
    );
  }
  t.throws(
    () => configFromEnv({ DATA_DIR: '/tmp/../proc/x' }),
    /DATA_DIR: \/proc\/x is under \/proc/,
  );
  const dir = t.testdir();
  fs.symlinkSync('/proc/self', path.join(dir, 'link'));
  const linked = path.join(dir, 'link', 'confab', 'data');
  t.throws(
    () => configFromEnv({ DATA_DIR: linked }),
    {
      message: new RegExp(
        `^bad environment: DATA_DIR: ${linked} is under /proc \\(it is /proc/\\d+/confab/data\\), `,
      ),
    },
    'a link to /proc on the way',
  );
  for (const ok of [path.join(dir, 'data'), '/devices/data', '/process', '/system/x'])
    t.equal(configFromEnv({ DATA_DIR: ok }).dataDir, ok, `${ok}: accepted`);
  t.end();
});
