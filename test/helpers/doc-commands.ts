/**
 * The shell commands of the README and docs/*.md (test/deploy/docs-commands.test.ts): every line
 * of a fenced `sh`/`bash`/`shell`/`console` block (continuation lines joined, comments dropped,
 * split at `&&`, `||`, `;`, `|`, `&`), and every inline code span that starts with a command of
 * the project (`npm …`, `npx …`, `node …`, `manage …`, `confab-manage …`, `scripts/…`, and the
 * deployment's `podman`, `systemctl`, `certbot`), after any `VAR=value` assignments.
 */
import fs from 'node:fs';
import path from 'node:path';

export type DocCommand = {
  /** README.md or docs/x.md */
  file: string;
  line: number;
  /** One simple command as written (assignments and redirections included). */
  text: string;
  /** Its words, quotes removed, without leading assignments, redirections or `sudo -u U`. */
  words: string[];
  /** The leading `VAR=value` assignments. */
  env: Record<string, string>;
  inline: boolean;
};

const BLOCK_LANGS = new Set(['sh', 'bash', 'shell', 'console']);
const INLINE_START =
  /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:sudo -u \S+ )?(?:(?:npm|npx|node|manage|confab-manage|podman|systemctl|certbot)(?=\s|$)|scripts\/)/;

/** Splits a line at unquoted separators (`&&`, `||`, `;`, `|`, `&`); drops a `#` comment. */
export function splitCommands(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      cur += c;
      if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i]!;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur += c;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += c + line[++i]!;
    } else if (c === '#' && (cur === '' || /\s$/.test(cur))) {
      break;
    } else if (c === '$' && line[i + 1] === '(') {
      // $( … ): kept whole
      const end = line.indexOf(')', i);
      cur += line.slice(i, end + 1);
      i = end;
    } else if (c === '&' || c === '|' || c === ';') {
      if (line[i + 1] === c) i++;
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** Shell words: quotes removed, redirections (`< f`, `> f`, `2>&1`) dropped. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < command.length) cur += command[++i]!;
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur ??= '';
    } else if (c === '$' && command[i + 1] === '(') {
      // $( … ): one word
      const end = command.indexOf(')', i);
      cur = (cur ?? '') + command.slice(i, end + 1);
      i = end;
    } else if (c === '\\' && i + 1 < command.length) {
      cur = (cur ?? '') + command[++i]!;
    } else if (/\s/.test(c)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else {
      cur = (cur ?? '') + c;
    }
  }
  if (cur !== null) words.push(cur);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^<[^<>]+>$/.test(w)) {
      out.push(w); // a placeholder, <name>
      continue;
    }
    if (/^\d?[<>]&\d$/.test(w)) continue;
    if (/^\d?(<|>|>>)$/.test(w)) {
      i++;
      continue;
    }
    if (/^\d?(<|>|>>)\S/.test(w)) continue;
    out.push(w);
  }
  return out;
}

function command(
  file: string,
  line: number,
  text: string,
  inline: boolean,
): DocCommand | undefined {
  let words = shellWords(text);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
    const [k, ...v] = words[0]!.split('=');
    env[k!] = v.join('=');
    words = words.slice(1);
  }
  if (words[0] === 'sudo' && words[1] === '-u') words = words.slice(3);
  if (words[0] === 'export') return { file, line, text, words, env, inline };
  if (words.length === 0) return undefined;
  return { file, line, text, words, env, inline };
}

export function extractCommands(file: string, content: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = content.split('\n');
  let fence: { lang: string } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const m = /^\s*(```|~~~)\s*(\S*)/.exec(raw);
    if (m) {
      fence = fence ? null : { lang: m[2]! };
      continue;
    }
    if (fence) {
      if (!BLOCK_LANGS.has(fence.lang)) continue;
      const start = i + 1;
      let joined = raw;
      while (/\\\s*$/.test(joined) && i + 1 < lines.length)
        joined = joined.replace(/\\\s*$/, ' ') + lines[++i]!.trim();
      for (const c of splitCommands(joined)) {
        const cmd = command(file, start, c, false);
        if (cmd) out.push(cmd);
      }
      continue;
    }
    for (const span of raw.matchAll(/`([^`]+)`/g)) {
      const text = span[1]!.trim();
      if (!INLINE_START.test(text)) continue;
      // A program named in prose (`node`, `npm`), not a command.
      if (/^(node|npm|npx|podman|systemctl|certbot)$/.test(text)) continue;
      for (const c of splitCommands(text)) {
        const cmd = command(file, i + 1, c, true);
        if (cmd) out.push(cmd);
      }
    }
  }
  return out;
}

/** README.md and docs/*.md of the checkout at `repo`. */
export function docCommands(repo: string): DocCommand[] {
  const files = [
    'README.md',
    ...fs
      .readdirSync(path.join(repo, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((f) => extractCommands(f, fs.readFileSync(path.join(repo, f), 'utf8')));
}
