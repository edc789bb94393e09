/**
 * Block structure. markdown-it parses the blocks (paragraphs, headings, quotes, lists, code,
 * tables, rules), configured to the reference's dialect: no raw HTML, no reference definitions,
 * no underlined headings, `# ` needs its space, a newline inside a paragraph is a line break. A
 * list directly under a line of text starts a list, and `*`, `-`, `+` items form one list (the
 * reference's "hanging lists"). Fenced blocks: code (with a language), `quote`, `spoiler`.
 * The inline content of each block goes through inline.ts.
 */
import MarkdownIt from 'markdown-it';
import { renderInline, type InlineState } from './inline.js';
import { El, escapeCode } from './tree.js';

const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
md.block.ruler.disable(['lheading', 'html_block', 'reference']);
md.core.ruler.disable(['inline', 'linkify', 'replacements', 'smartquotes', 'text_join']);

/**
 * The reference's fence opener: the fence, an optional language made of [a-zA-Z0-9_+-./#], then
 * an optional header without ` or ~. Any other line starting with ``` or ~~~ is text.
 */
const FENCE_OPENER = /^(?:~{3,}|`{3,})[ ]*\{?\.?[a-zA-Z0-9_+\-./#]*[ ]*(?:[^ ~`][^~`]*)?\}?$/;
type BlockRule = (state: StateBlock, start: number, end: number, silent: boolean) => boolean;
type StateBlock = { src: string; bMarks: number[]; tShift: number[]; eMarks: number[] };
const fenceRule = (
  md.block.ruler as unknown as { __rules__: { name: string; fn: BlockRule }[] }
).__rules__.find((r) => r.name === 'fence')!.fn;
md.block.ruler.at(
  'fence',
  (state: StateBlock, start: number, end: number, silent: boolean) => {
    const line = state.src.slice(state.bMarks[start]! + state.tShift[start]!, state.eMarks[start]);
    if (/^(?:~~~|```)/.test(line) && !FENCE_OPENER.test(line)) return false;
    return fenceRule(state, start, end, silent);
  },
  { alt: ['paragraph', 'reference', 'blockquote', 'list'] },
);

/** Code-block language names as the reference's highlighter reports them (data-code-language). */
const LANGUAGE_NAMES: Record<string, string> = {
  python: 'Python',
  py: 'Python',
  python3: 'Python',
  py3: 'Python',
  py2: 'Python 2.x',
  python2: 'Python 2.x',
  javascript: 'JavaScript',
  js: 'JavaScript',
  typescript: 'TypeScript',
  ts: 'TypeScript',
  json: 'JSON',
  bash: 'Bash',
  sh: 'Bash',
  shell: 'Bash',
  zsh: 'Bash',
  console: 'Bash Session',
  c: 'C',
  cpp: 'C++',
  'c++': 'C++',
  csharp: 'C#',
  'c#': 'C#',
  java: 'Java',
  go: 'Go',
  golang: 'Go',
  rust: 'Rust',
  rs: 'Rust',
  ruby: 'Ruby',
  rb: 'Ruby',
  php: 'PHP',
  html: 'HTML',
  xml: 'XML',
  css: 'CSS',
  scss: 'SCSS',
  sql: 'SQL',
  yaml: 'YAML',
  yml: 'YAML',
  toml: 'TOML',
  markdown: 'Markdown',
  md: 'Markdown',
  diff: 'Diff',
  tex: 'TeX',
  latex: 'TeX',
  haskell: 'Haskell',
  kotlin: 'Kotlin',
  swift: 'Swift',
  scala: 'Scala',
  perl: 'Perl',
  lua: 'Lua',
  r: 'R',
  text: 'Text only',
  dockerfile: 'Docker',
  ini: 'INI',
  make: 'Makefile',
  makefile: 'Makefile',
  nginx: 'Nginx configuration file',
  powershell: 'PowerShell',
  objectivec: 'Objective-C',
  elixir: 'Elixir',
  erlang: 'Erlang',
  clojure: 'Clojure',
  ocaml: 'OCaml',
  graphql: 'GraphQL',
};

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})[ ]*\{?\.?([a-zA-Z0-9_+\-./#]*)/;
const LIST_ITEM = /^[ ]*([*+-]|\d+\.)[ ]+(.*)/;
const HR_LINE = /^ {0,3}([*_-])(?:[ \t]*\1){2,}[ \t]*$/;

/**
 * Inserts the blank line the reference inserts between a line of text and a list that hangs off
 * it, and makes `*`, `-` and `+` items one list, outside code fences.
 */
export function preprocessLists(src: string): { src: string; starts: Map<number, string> } {
  const starts = new Map<number, string>();
  const lines = src.split('\n');
  const outLines: string[] = [];
  const fences: { fence: string; code: boolean }[] = [];
  let inCode = false;
  // Open list items: the source indent of the marker, and the column its content starts at
  // after re-indenting (the reference nests list items by two spaces, whatever the marker).
  let items: { src: number; col: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const f = FENCE_LINE.exec(line);
    if (f) {
      const lang = f[2]!;
      const top = fences[fences.length - 1];
      if (!lang && top && top.fence === f[1]) fences.pop();
      else
        fences.push({
          fence: f[1]!,
          code: lang !== 'quote' && lang !== 'quoted' && lang !== 'spoiler',
        });
      inCode = fences.some((x) => x.code);
    } else if (!inCode && !HR_LINE.test(line)) {
      line = line.replace(/^([ ]*)[+-]([ ]+)/, '$1*$2');
      const item = /^([ ]*)([*]|\d+\.)([ ]+)/.exec(line);
      if (item) {
        const ind = item[1]!.length;
        while (items.length > 0 && items[items.length - 1]!.src >= ind) items.pop();
        const parent = items[items.length - 1];
        const out = parent && ind > 0 ? parent.col : ind;
        if (parent || ind < 4) {
          let marker = item[2]!;
          // CommonMark lets only a list starting at 1 interrupt a paragraph; the reference nests
          // any number. Renumber to 1 here and restore the start on the <ol>.
          const prev = out === 0 ? '' : (lines[i - 1] ?? '');
          if (parent && marker !== '*' && marker !== '1.' && prev.trim()) {
            starts.set(outLines.length, marker.slice(0, -1));
            marker = '1.';
          }
          line = ' '.repeat(out) + marker + line.slice(ind + item[2]!.length);
          items.push({ src: ind, col: out + marker.length + item[3]!.length });
        }
      } else if (line.trim() && !/^[ ]/.test(line)) {
        items = [];
      }
    }
    outLines.push(line);
    const next = lines[i + 1];
    if (next === undefined || inCode || !line) continue;
    const li1 = LIST_ITEM.exec(line);
    const li2 = LIST_ITEM.exec(next);
    if (HR_LINE.test(next)) continue;
    if ((li2 && !li1) || (li1 && li2 && (li1[1]!.length === 1) !== (li2[1]!.length === 1)))
      outLines.push('');
  }
  return { src: outLines.join('\n'), starts };
}

function codeBlock(code: string, lang: string): El {
  const lines = code.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const body = lines.map((l) => l.replace(/\s+$/, '')).join('\n') + '\n';
  const name = lang ? (LANGUAGE_NAMES[lang.toLowerCase()] ?? lang) : '';
  const attr = name ? ` data-code-language="${escapeCode(name)}"` : '';
  return El.rawBlock(
    `<div class="codehilite"${attr}><pre><span></span><code>${escapeCode(body)}</code></pre></div>`,
  );
}

type Frame = { el: El; inQuote: boolean };

/** Parses `src` as blocks and appends them to `parent`. */
export function renderBlocks(src: string, parent: El, s: InlineState, inQuote: boolean): void {
  const pre = preprocessLists(src);
  const tokens = md.parse(pre.src, {});
  const stack: Frame[] = [{ el: parent, inQuote }];
  const top = () => stack[stack.length - 1]!;
  const open = (el: El, quote = top().inQuote) => {
    top().el.append(el);
    stack.push({ el, inQuote: quote });
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    switch (t.type) {
      case 'paragraph_open':
        if (!t.hidden) open(new El('p'));
        break;
      case 'heading_open':
        open(new El(t.tag));
        break;
      case 'blockquote_open':
        open(new El('blockquote'), true);
        break;
      case 'bullet_list_open':
        open(new El('ul'));
        break;
      case 'ordered_list_open': {
        const start = (t.map && pre.starts.get(t.map[0])) ?? t.attrGet('start');
        open(new El('ol', start !== null && String(start) !== '1' ? { start: String(start) } : {}));
        break;
      }
      case 'list_item_open':
        open(new El('li'));
        break;
      case 'table_open':
      case 'thead_open':
      case 'tbody_open':
      case 'tr_open':
        open(new El(t.tag));
        break;
      case 'th_open':
      case 'td_open': {
        const style = /text-align:\s*(\w+)/.exec(String(t.attrGet('style') ?? ''));
        open(new El(t.tag, style ? { style: `text-align: ${style[1]!};` } : {}));
        break;
      }
      case 'paragraph_close':
        if (!t.hidden) stack.pop();
        break;
      case 'blockquote_close': {
        const q = stack.pop()!.el;
        if (q.children.length === 0) {
          // `>` with nothing after it is text, as the reference renders it.
          q.tag = 'p';
          q.text = '>';
        }
        break;
      }
      case 'heading_close':
      case 'bullet_list_close':
      case 'ordered_list_close':
      case 'list_item_close':
      case 'table_close':
      case 'thead_close':
      case 'tbody_close':
      case 'tr_close':
      case 'th_close':
      case 'td_close':
        stack.pop();
        break;
      case 'inline': {
        const f = top();
        renderInline(f.el, t.content, { ...s, inBlockquote: f.inQuote });
        break;
      }
      case 'hr':
        top().el.append(new El('hr'));
        break;
      case 'code_block':
        top().el.append(codeBlock(t.content, ''));
        break;
      case 'fence': {
        const info = /^\{?\.?([a-zA-Z0-9_+\-./#]*)[ ]*(.*?)\}?$/s.exec(t.info.trim());
        const lang = info?.[1] ?? '';
        const header = info?.[2] ?? '';
        const f = top();
        if (lang === 'quote' || lang === 'quoted') {
          const q = f.el.append(new El('blockquote'));
          renderBlocks(t.content, q, s, true);
        } else if (lang === 'spoiler') {
          const block = f.el.append(new El('div', { class: 'spoiler-block' }));
          const head = block.append(new El('div', { class: 'spoiler-header' }));
          if (header.trim()) renderBlocks(header, head, s, f.inQuote);
          const body = block.append(
            new El('div', { class: 'spoiler-content', 'aria-hidden': 'true' }),
          );
          body.ordered = true;
          renderBlocks(t.content, body, s, f.inQuote);
        } else {
          f.el.append(codeBlock(t.content, lang));
        }
        break;
      }
      default:
        break;
    }
  }
}
