/**
 * Which uWebSockets.js build the server loads (src/http/uws.ts `chooseBuild`): the modern one
 * wherever it loads, the legacy one otherwise, CONFAB_UWS forcing either; never none silently.
 */
import t from 'tap';
import {
  buildReport,
  chooseBuild,
  LIMITS,
  uwsBuild,
  uwsBuildName,
  type BuildProbe,
} from '../../src/http/uws.js';

const GLIBC = new Error("libc.so.6: version `GLIBC_2.38' not found");
const loads = () => null;
const fails = () => GLIBC;

function choose(p: Partial<BuildProbe>) {
  let tried = 0;
  const loadModern = p.loadModern ?? loads;
  const r = chooseBuild({
    override: undefined,
    legacyHasBinary: true,
    ...p,
    loadModern: () => {
      tried++;
      return loadModern();
    },
  });
  return { r, tried };
}

t.test('the modern build wherever it loads, the legacy one otherwise', (t) => {
  t.same(choose({}).r, { build: 'modern', modernError: null }, 'both load: modern');
  t.same(choose({ legacyHasBinary: false }).r, { build: 'modern', modernError: null });
  t.same(choose({ loadModern: fails }).r, { build: 'legacy', modernError: GLIBC }, 'old glibc');
  t.match(choose({ loadModern: fails, legacyHasBinary: false }).r, {
    error: /neither build loads: .*GLIBC_2\.38/,
  });
  t.end();
});

t.test('CONFAB_UWS forces a build, and fails when it does not load', (t) => {
  const legacy = choose({ override: 'legacy' });
  t.same(legacy.r, { build: 'legacy', modernError: null });
  t.equal(legacy.tried, 0, 'the modern build is not even loaded');
  t.match(choose({ override: 'legacy', legacyHasBinary: false }).r, { error: /no binary/ });
  t.same(choose({ override: 'modern' }).r, { build: 'modern', modernError: null });
  t.match(choose({ override: 'modern', loadModern: fails }).r, {
    error: /CONFAB_UWS=modern, but it does not load: .*GLIBC/,
  });
  t.match(choose({ override: 'fast' }).r, { error: /CONFAB_UWS must be modern or legacy/ });
  t.same(choose({ override: '' }).r, { build: 'modern', modernError: null }, 'empty: choose');
  t.end();
});

t.test('the start says which build runs and what it does not answer', (t) => {
  const { msg, fields } = buildReport();
  t.ok(['modern', 'legacy'].includes(uwsBuildName));
  t.equal(fields.build, uwsBuild);
  t.equal(fields.notAnswered, LIMITS[uwsBuildName]);
  t.match(msg, uwsBuildName);
  t.match(LIMITS.legacy, /header names/);
  t.match(LIMITS.modern, /absolute-form/);
  if (uwsBuildName === 'legacy' && process.env.CONFAB_UWS !== 'legacy')
    t.match(fields.modernUnavailable, /\S/, 'why the modern build did not load is said');
  t.end();
});
