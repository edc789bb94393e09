/**
 * The reference's own markdown fixture of release 10.2 (../shared/reference/zulip-10.2/
 * markdown_test_cases.json, read in place, never copied into this repository; SOURCE.md there
 * says where it comes from): every regular case and every linkify case must render exactly as the
 * reference renders it, against a context like the reference's test realm (its host, a user
 * "Zoe" with id 7, its image proxy settings: prefix https://external-content.zulipcdn.net/
 * external_content/, key "dummy"). A case may be listed in EXCEPTIONS only when it depends on an
 * outside service this machine cannot reach; there are none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { renderMarkdown, type RenderContext } from '../../src/lib/markdown/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FILE = 'reference/zulip-10.2/markdown_test_cases.json';
const candidates = [
  path.resolve(here, '../../../../shared', FILE), // dist/test/unit → repo/..
  path.resolve(here, '../../../shared', FILE),
  path.resolve(process.cwd(), '../shared', FILE),
];
const found = candidates.find((p) => fs.existsSync(p));

/** Case name → why it cannot pass here (only: it needs an outside service). */
const EXCEPTIONS: Record<string, string> = {};

export const FIXTURE_CONTEXT: RenderContext = {
  version: 'reference-fixture',
  realm_url: 'http://zulip.testserver',
  users: [{ id: 7, full_name: 'Zoe', is_active: true }],
  groups: [],
  channels: [{ id: 1, name: 'Denmark' }],
  linkifiers: [],
  realm_emoji: [],
  alert_words: [],
  image_proxy: { prefix: 'https://external-content.zulipcdn.net/external_content/', key: 'dummy' },
};

type Regular = {
  name: string;
  input: string;
  expected_output: string;
  translate_emoticons?: boolean;
};

if (!found) {
  t.comment(`${FILE} not found beside the repository; the reference fixture was not run`);
  t.pass('fixture absent');
} else {
  const data = JSON.parse(fs.readFileSync(found, 'utf8')) as {
    regular_tests: Regular[];
    linkify_tests: [string, string, string][];
  };

  t.test('regular cases', (t) => {
    t.equal(data.regular_tests.length, 184, 'the 10.2 fixture has 184 cases');
    let passed = 0;
    for (const c of data.regular_tests) {
      const out = renderMarkdown(c.input, FIXTURE_CONTEXT, {
        translate_emoticons: c.translate_emoticons === true,
      }).rendered_content;
      if (c.name in EXCEPTIONS) {
        t.comment(`${c.name}: not checked (${EXCEPTIONS[c.name]!})`);
        continue;
      }
      t.equal(out, c.expected_output, c.name);
      if (out === c.expected_output) passed++;
    }
    t.comment(`${passed}/${data.regular_tests.length} regular cases pass`);
    t.end();
  });

  // The reference's test_markdown_fixtures: the expected template gets the link at %s.
  t.test('linkify cases', (t) => {
    t.equal(data.linkify_tests.length, 71);
    for (const [input, template, url] of data.linkify_tests) {
      const href = url.startsWith('http')
        ? url
        : url.includes('@')
          ? 'mailto:' + url
          : 'http://' + url;
      const expected = template.includes('%s')
        ? template.replace('%s', `<a href="${href}">${url}</a>`)
        : template;
      t.equal(renderMarkdown(input, FIXTURE_CONTEXT).rendered_content, expected, input);
    }
    t.end();
  });

  t.test('no exception names a case that does not exist', (t) => {
    const names = new Set(data.regular_tests.map((c) => c.name));
    for (const n of Object.keys(EXCEPTIONS)) t.ok(names.has(n), n);
    t.end();
  });
}
