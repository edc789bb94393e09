/**
 * Property tests (fast-check) of the parsers user input goes through: form bodies, multipart
 * bodies (whole, in random chunks, cut at random bytes), narrows, markdown and TeX, linkifier
 * patterns. For any input each either succeeds or refuses with a JsonableError (an API error,
 * never a crash), settles (a body parser never hangs), and leaves nothing behind (received files);
 * rendered HTML carries no script; an accepted linkifier matches in time linear in its text.
 * The narrows' queries against a real server: test/api/narrows-property.test.ts.
 *
 * CONFAB_FUZZ_SEED repeats a run (printed), CONFAB_FUZZ_RUNS multiplies the cases; a failure
 * prints fast-check's shrunk counterexample.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import { Parser } from 'htmlparser2';
import t, { type Test } from 'tap';
import { createBodySink, parseUrlEncoded } from '../../src/http/body.js';
import type { UploadedFile } from '../../src/http/request.js';
import { JsonableError } from '../../src/lib/errors.js';
import { MAX_PARAMETERS } from '../../src/lib/limits.js';
import {
  EMPTY_CONTEXT,
  LinkifierError,
  renderMarkdown,
  topicLinks,
  validateLinkifier,
} from '../../src/lib/markdown/index.js';
import { compileLinkifier } from '../../src/lib/markdown/linkifiers.js';
import { parseNarrowParam } from '../../src/lib/narrow.js';
import { fuzzScale, fuzzSeed } from '../helpers/fuzz.js';

const seed = fuzzSeed();
const runs = (n: number) => ({ numRuns: n * fuzzScale(), seed });
t.comment(`fast-check seed ${seed} (CONFAB_FUZZ_SEED=${seed} repeats it)`);

/** Runs a property; a failure is one tap failure naming the shrunk counterexample. */
async function holds(t: Test, what: string, run: () => Promise<void> | void): Promise<void> {
  try {
    await run();
    t.pass(what);
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `\n${err.cause.stack}` : '';
    t.fail(`${what}: ${err instanceof Error ? err.message : String(err)}${cause}`);
  }
}

const isApiError = (err: unknown) => err instanceof JsonableError;
const describeError = (err: unknown) => (err instanceof Error ? err.stack : JSON.stringify(err));

t.test('form bodies', async (t) => {
  await holds(t, 'any text parses', () =>
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
        parseUrlEncoded(s);
      }),
      runs(500),
    ),
  );
  await holds(t, 'fields come back as they were sent (the last of a repeated name wins)', () =>
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.string({ unit: 'grapheme', maxLength: 12 }),
            fc.string({ unit: 'grapheme', maxLength: 40 }),
          ),
          { maxLength: 8 },
        ),
        (fields) => {
          const sp = new URLSearchParams();
          for (const [k, v] of fields) sp.append(k, v);
          const parsed = parseUrlEncoded(sp.toString());
          const want: Record<string, string> = {};
          for (const [k, v] of fields) want[k] = v;
          for (const [k, v] of Object.entries(want)) if (parsed[k] !== v) throw new Error(`${k}`);
        },
      ),
      runs(300),
    ),
  );
  // parseUrlEncoded splits plain text itself and leaves the rest to URLSearchParams: the same
  // fields, values and order as URLSearchParams gives for any text (the characters that matter
  // drawn often: separators, escapes, a leading '?', non-ASCII).
  const formChar = fc.constantFrom(...'&&==??%%++ab0_-.~ \t\u00e9\u20ac'.split(''), '%2', '%41');
  const byUrlSearchParams = (s: string) => {
    const out = Object.create(null) as Record<string, string>;
    for (const [k, v] of new URLSearchParams(s)) out[k] = v;
    return out;
  };
  const same = (s: string) => {
    const got = parseUrlEncoded(s);
    const want = byUrlSearchParams(s);
    if (JSON.stringify(Object.entries(got)) !== JSON.stringify(Object.entries(want)))
      throw new Error(`${JSON.stringify(s)}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
  };
  await holds(t, 'fields as URLSearchParams reads them', () =>
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(formChar, { maxLength: 40 }).map((a) => a.join('')),
          fc.string({ unit: 'binary', maxLength: 60 }),
        ),
        same,
      ),
      runs(2000),
    ),
  );
  for (const s of ['?a=1&b=2', '??a=1', 'a&&b=&=c&a=3', '&', '=', 'q=1=2', 'x=%41', 'y=a+b', 'é=1'])
    same(s);

  // Each character read a bounded number of times, whatever the text: counted through
  // String.prototype.indexOf (what the parser scans with), not timed. Parts without '=' made each
  // look for the next '=' read the rest of the text (a 4 MiB body of `a&`: minutes of CPU).
  const scannedFor = (text: string) => {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call below
    const indexOf = String.prototype.indexOf;
    let scanned = 0;
    String.prototype.indexOf = function (this: string, search: string, from?: number): number {
      const at = indexOf.call(this, search, from);
      scanned += (at === -1 ? this.length : at) - (from ?? 0);
      return at;
    };
    try {
      parseUrlEncoded(text);
    } finally {
      String.prototype.indexOf = indexOf;
    }
    return scanned;
  };
  // (At most MAX_PARAMETERS parts: more are refused, src/http/body.ts.)
  const n = MAX_PARAMETERS;
  for (const text of ['a&'.repeat(n), 'a&'.repeat(n - 1) + 'b=1', 'x=1&'.repeat(n)]) {
    const scanned = scannedFor(text);
    t.ok(scanned <= 3 * text.length, `${scanned} characters scanned for ${text.length}`);
  }
});

const BOUNDARY = 'propboundary';

/** A multipart body of fields and files, as bytes. */
function multipart(parts: readonly { name: string; value: Uint8Array; file: boolean }[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disp = p.file
      ? `form-data; name="${p.name}"; filename="${p.name}.bin"\r\nContent-Type: application/octet-stream`
      : `form-data; name="${p.name}"`;
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disp}\r\n\r\n`));
    out.push(Buffer.from(p.value), Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(out);
}

/** Feeds `body` to a multipart sink in chunks of `sizes`; resolves with how it settled. */
async function parseMultipart(
  tmpDir: string,
  body: Buffer,
  sizes: readonly number[],
): Promise<{ fields: Record<string, string> | null; error: unknown; files: UploadedFile[] }> {
  const files: UploadedFile[] = [];
  const sink = createBodySink(`multipart/form-data; boundary=${BOUNDARY}`, {
    tmpDir,
    maxFileBytes: 4096,
    maxFiles: 2,
    files,
    onExtraFile: () => undefined,
  });
  let at = 0;
  for (const n of [...sizes, body.length]) {
    if (at >= body.length || sink.failure) break;
    sink.write(body.subarray(at, at + Math.max(1, n)));
    at += Math.max(1, n);
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    // A bound on a hung parser (its files are written through the thread pool, which a loaded
    // CI machine's disk can hold up for seconds), not a timing assertion.
    timer = setTimeout(() => reject(new Error('the parser never settled')), 60_000);
  });
  try {
    const fields = await Promise.race([sink.end(), deadline]);
    return { fields, error: null, files };
  } catch (error) {
    if (error instanceof Error && error.message === 'the parser never settled') throw error;
    return { fields: null, error, files };
  } finally {
    clearTimeout(timer);
  }
}

/** The received files left in `dir`, once pending removals ran. */
async function leftIn(dir: string): Promise<string[]> {
  await new Promise((r) => setTimeout(r, 5));
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

t.test('multipart bodies', async (t) => {
  const tmpDir = t.testdir();
  const part = fc.record({
    name: fc.stringMatching(/^[a-z]{1,8}$/),
    value: fc.uint8Array({ maxLength: 300 }),
    file: fc.boolean(),
  });
  await holds(t, 'whole bodies in random chunks: fields as sent, files on disk', () =>
    fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(part, { maxLength: 4, selector: (p) => p.name }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 10 }),
        async (parts, sizes) => {
          // A value holding the boundary would end its part early: not a well-formed body.
          if (parts.some((p) => Buffer.from(p.value).includes(`--${BOUNDARY}`))) return;
          const r = await parseMultipart(tmpDir, multipart(parts), sizes);
          // (Files past the endpoint's two are counted and dropped, not refused.)
          if (r.error !== null) throw new Error(`refused: ${describeError(r.error)}`);
          for (const p of parts.filter((p) => !p.file)) {
            if (r.fields![p.name] !== Buffer.from(p.value).toString('utf8'))
              throw new Error(`field ${p.name} differs`);
          }
          if (r.files.length !== Math.min(2, parts.filter((p) => p.file).length))
            throw new Error(`${r.files.length} files stored`);
          for (const f of r.files) {
            const want = parts.find((p) => p.file && p.name === f.field)!;
            if (!fs.readFileSync(f.tmpPath).equals(Buffer.from(want.value)))
              throw new Error(`file ${f.field} differs`);
            fs.rmSync(f.tmpPath);
          }
        },
      ),
      runs(200),
    ),
  );
  await holds(
    t,
    'bodies cut at any byte, or garbage: an API error or fields, and no file left',
    () =>
      fc.assert(
        fc.asyncProperty(
          fc.array(part, { minLength: 1, maxLength: 3 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 6 }),
          fc.uint8Array({ maxLength: 40 }),
          async (parts, cutAt, sizes, garbage) => {
            const whole = multipart(parts);
            const body = Buffer.concat([
              whole.subarray(0, Math.floor(cutAt * whole.length)),
              Buffer.from(garbage),
            ]);
            const r = await parseMultipart(tmpDir, body, sizes);
            if (r.error !== null && !isApiError(r.error))
              throw new Error(`not an API error: ${describeError(r.error)}`);
            for (const f of r.files) fs.rmSync(f.tmpPath, { force: true });
            const left = await leftIn(tmpDir);
            if (left.length > 0) throw new Error(`${left.length} files left behind`);
          },
        ),
        runs(300),
      ),
  );
});

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 10 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom('operator', 'operand', 'negated', 'x', '__proto__'),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

const OPERATORS = [
  'channel',
  'stream',
  'topic',
  'sender',
  'dm',
  'pm-with',
  'is',
  'search',
  'id',
  'has',
  'near',
  'with',
  'channels',
  'dm-including',
  'bogus',
];

t.test('narrows', async (t) => {
  const term = fc.oneof(
    fc.record({
      operator: fc.oneof(fc.constantFrom(...OPERATORS), fc.string({ maxLength: 8 })),
      operand: fc.oneof(json, fc.array(fc.integer(), { maxLength: 3 })),
      negated: fc.oneof(fc.boolean(), json),
    }),
    fc.tuple(fc.constantFrom(...OPERATORS), fc.oneof(fc.string({ maxLength: 8 }), json)),
    json,
  );
  await holds(t, 'any JSON is a narrow or an API error', () =>
    fc.assert(
      fc.property(fc.oneof(fc.array(term, { maxLength: 120 }), json), (v) => {
        try {
          const narrow = parseNarrowParam(v);
          for (const n of narrow) if (typeof n.operator !== 'string') throw new Error('operator');
        } catch (err) {
          if (!isApiError(err)) throw err;
        }
      }),
      runs(1000),
    ),
  );
});

/** What must never be in rendered HTML: scripts, event handlers, javascript: links. */
function unsafeHtml(html: string): string | null {
  let found: string | null = null;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (['script', 'iframe', 'object', 'embed', 'style'].includes(name)) found ??= `<${name}>`;
      for (const [k, v] of Object.entries(attrs)) {
        if (k.startsWith('on')) found ??= `${name} ${k}=`;
        if ((k === 'href' || k === 'src') && /^\s*(javascript|vbscript|data):/i.test(v))
          found ??= `${name} ${k}=${v}`;
      }
    },
  });
  parser.write(html);
  parser.end();
  return found;
}

const MARKDOWN_UNITS = [
  '*',
  '**',
  '_',
  '__',
  '~~',
  '`',
  '```',
  '```math\n',
  '```quote\n',
  '```spoiler x\n',
  '$$',
  '$$$',
  '\\frac{a}{b}',
  '\\sqrt{',
  '{',
  '}',
  '^',
  '[',
  ']',
  '(',
  ')',
  '![',
  '#',
  '# ',
  '> ',
  '- ',
  '1. ',
  '|',
  '---',
  ':',
  ':smile:',
  '@**',
  '@*',
  '@_**',
  '#**',
  '>',
  '**@',
  '<',
  '<script>',
  '&',
  '&amp;',
  '"',
  "'",
  '\n',
  '\n\n',
  '    ',
  ' ',
  'a',
  'é',
  '😀',
  '1',
  'http://x.co',
  'https://example.com/a_(b)',
  'javascript:alert(1)',
  '[x](javascript:a)',
  '<time:2024-01-01T00:00:00Z>',
  '/me ',
  '\\',
  '\u0000',
  '\u202e',
  '\ud800',
];

t.test('markdown and TeX', async (t) => {
  const text = fc
    .array(fc.constantFrom(...MARKDOWN_UNITS), { maxLength: 60 })
    .map((u) => u.join(''));
  await holds(t, 'any text renders, without scripts', () =>
    fc.assert(
      fc.property(text, (content) => {
        const html = renderMarkdown(content, EMPTY_CONTEXT).rendered_content;
        const bad = unsafeHtml(html);
        if (bad !== null) throw new Error(`unsafe HTML (${bad}): ${html.slice(0, 300)}`);
      }),
      runs(1500),
    ),
  );
  const TEX = [
    'x',
    '^',
    '_',
    '{',
    '}',
    '\\frac',
    '\\sqrt',
    '\\left(',
    '\\right)',
    '\\begin{matrix}',
    '\\end{matrix}',
    '&',
    '\\\\',
    '\\href{javascript:alert(1)}{x}',
    '\\url{x}',
    '\\def\\a{\\a}\\a',
    '\\htmlClass{x}{y}',
    '\\color{red}',
    '$',
    '\\',
    ' ',
  ];
  const tex = fc.array(fc.constantFrom(...TEX), { maxLength: 40 }).map((u) => u.join(''));
  await holds(t, 'any TeX renders or falls back, without scripts', () =>
    fc.assert(
      fc.property(tex, fc.constantFrom('$$', '```math\n'), (body, fence) => {
        const content = fence === '$$' ? `$$${body}$$` : `${fence}${body}\n\`\`\``;
        const html = renderMarkdown(content, EMPTY_CONTEXT).rendered_content;
        const bad = unsafeHtml(html);
        if (bad !== null) throw new Error(`unsafe HTML (${bad}): ${html.slice(0, 300)}`);
      }),
      runs(500),
    ),
  );
});

/** Regular expressions built from pieces users write, well-formed or not. */
const regex: fc.Arbitrary<string> = fc.letrec((tie) => ({
  atom: fc.oneof(
    fc.constantFrom(
      'a',
      'b',
      '#',
      '-',
      '.',
      '\\w',
      '\\d',
      '\\s',
      '[a-z]',
      '[^ ]',
      '\\pL',
      '[[:alpha:]]',
      '(',
      ')',
      '[',
      '\\',
      '{',
      '|',
      // What RE2 (and so the API) refuses, or accepts only in its own syntax.
      '(?=a)',
      '(?!a)',
      '(?<=a)',
      '\\1',
      '(?P=x)',
      '(?>a)',
      '(?#c)',
      '(?i)',
      '(?P<x>a)',
      '\\A',
      '\\z',
      '\\b',
      '\\x{41}',
      '\\p{Greek}',
      '{1001}',
      '{100}',
    ),
    fc
      .tuple(tie('re'), fc.constantFrom('', '*', '+', '?', '{2,5}', '{0,}', '*?'))
      .map(([r, q]) => `(?:${r as string})${q}`),
  ),
  re: fc
    .array(fc.tuple(tie('atom'), fc.constantFrom('', '', '*', '+', '?', '{1,3}', '**')), {
      minLength: 1,
      maxLength: 5,
    })
    .map((parts) => parts.map(([a, q]) => `${a as string}${q}`).join('')),
})).re;

t.test('linkifier patterns', async (t) => {
  const adversarial = fc.constantFrom('a', 'ab', 'a-', '1', ' ', '#1', 'aa#', '-a');
  await holds(
    t,
    'a pattern is accepted or refused as the API refuses; accepted ones compile and match in linear time',
    () =>
      fc.assert(
        fc.property(
          regex,
          fc.boolean(),
          adversarial,
          fc.integer({ min: 1, max: 400 }),
          (body, named, unit, n) => {
            const pattern = named ? `(?P<id>${body})` : body;
            const template = named ? 'https://example.com/{id}' : 'https://example.com/';
            try {
              validateLinkifier(pattern, template);
            } catch (err) {
              if (err instanceof LinkifierError) return;
              throw err;
            }
            const linkifier = { id: 1, pattern, url_template: template };
            // What the API accepts, the renderer compiles (it skips what does not compile).
            if (compileLinkifier(linkifier) === null)
              throw new Error(`accepted, yet it does not compile: ${pattern}`);
            const ctx = { ...EMPTY_CONTEXT, linkifiers: [linkifier] };
            // Text that makes a backtracking engine explore every way to split it.
            const text = unit.repeat(n) + '!';
            renderMarkdown(text, ctx);
            topicLinks(text.slice(0, 60), ctx.linkifiers);
          },
        ),
        runs(400),
      ),
  );
});

t.test('a linkifier that backtracks without end on a backtracking engine', (t) => {
  // Regression: accepted, and on 300 characters of `a` the render took 12 s (on the main thread
  // for a short message); on 2,000 characters, hours. RE2 matches it in one pass.
  const pattern = '(?P<id>a*a*a*a*a*b)';
  validateLinkifier(pattern, 'https://example.com/{id}');
  const ctx = {
    ...EMPTY_CONTEXT,
    linkifiers: [{ id: 1, pattern, url_template: 'https://example.com/{id}' }],
  };
  const started = performance.now();
  const html = renderMarkdown('a'.repeat(2000) + '!', ctx).rendered_content;
  t.equal(html, `<p>${'a'.repeat(2000)}!</p>`, 'no link');
  t.same(topicLinks('a'.repeat(59) + '!', ctx.linkifiers), []);
  const linked = renderMarkdown('see aaab now', ctx).rendered_content;
  t.match(linked, /<a href="https:\/\/example\.com\/aaab">aaab<\/a>/, 'it still links');
  // The bound for any answer; a backtracking engine takes hours here.
  t.ok(performance.now() - started < 5000, 'rendered within 5 s');
  t.end();
});
