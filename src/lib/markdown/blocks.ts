/**
 * Block structure. markdown-it parses the blocks (paragraphs, headings, quotes, lists, code,
 * tables, rules), configured to the reference's dialect: no raw HTML, no reference definitions,
 * no underlined headings, `# ` needs its space, a newline inside a paragraph is a line break. A
 * list directly under a line of text starts a list, and `*`, `-`, `+` items form one list (the
 * reference's "hanging lists"). Fenced blocks: code (with a language), `quote`, `spoiler`.
 * The inline content of each block goes through inline.ts.
 */
import MarkdownIt from 'markdown-it';
import { codeBlockHtml, FENCE_PLACEHOLDER, preprocessFences, type FenceItem } from './fences.js';
import type { InlineState } from './inline-pattern.js';
import { renderInline } from './inline.js';
import { El } from './tree.js';

const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
// Fences are read before the block parser (fences.ts), as the reference reads them.
md.block.ruler.disable(['lheading', 'html_block', 'reference', 'fence']);
md.core.ruler.disable(['inline', 'linkify', 'replacements', 'smartquotes', 'text_join']);

type ParagraphState = {
  src: string;
  bMarks: number[];
  eMarks: number[];
  tShift: number[];
  sCount: number[];
  blkIndent: number;
  line: number;
  parentType: string;
  md: { block: { ruler: { getRules(name: string): BlockRule[] } } };
  isEmpty(line: number): boolean;
  getLines(begin: number, end: number, indent: number, keepLastLF: boolean): string;
  push(
    type: string,
    tag: string,
    nesting: number,
  ): {
    map: [number, number] | null;
    content: string;
    children: unknown[] | null;
  };
};
type BlockRule = (state: ParagraphState, start: number, end: number, silent: boolean) => boolean;

/**
 * Paragraphs as the reference keeps them: leading whitespace dropped, trailing whitespace kept
 * (`test  ` stays `test  `), and the lines that continue a list item's first line kept with
 * their indentation.
 */
md.block.ruler.at('paragraph', ((state: ParagraphState, startLine: number, endLine: number) => {
  const terminators = state.md.block.ruler.getRules('paragraph');
  const oldParentType = state.parentType;
  let nextLine = startLine + 1;
  state.parentType = 'paragraph';
  for (; nextLine < endLine && !state.isEmpty(nextLine); nextLine++) {
    if (state.sCount[nextLine]! - state.blkIndent > 3) continue;
    if (state.sCount[nextLine]! < 0) continue;
    if (terminators.some((rule) => rule(state, nextLine, endLine, true))) break;
  }
  const firstStart = state.bMarks[startLine]!;
  const itemStart = /\S/.test(state.src.slice(firstStart, firstStart + state.tShift[startLine]!));
  let content = state.getLines(startLine, startLine + 1, state.blkIndent, false);
  for (let l = startLine + 1; l < nextLine; l++)
    content += '\n' + state.getLines(l, l + 1, itemStart ? 0 : state.blkIndent, false);
  state.line = nextLine;
  state.push('paragraph_open', 'p', 1).map = [startLine, nextLine];
  const inline = state.push('inline', '', 0);
  inline.content = content.replace(/^[ \t\n]+/, '');
  inline.map = [startLine, nextLine];
  inline.children = [];
  state.push('paragraph_close', 'p', -1);
  state.parentType = oldParentType;
  return true;
}) as never);

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

/** An indented code block: highlighted only when a first line names a language (`:::python` is dropped). */
function indentedCode(code: string): El {
  const lines = code.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let body = lines.map((l) => l.replace(/\s+$/, '')).join('\n');
  if (/^:::+[\w#.+-]+\s*(?:\n|$)/.test(body)) {
    const lang = /^:::+([\w#.+-]+)/.exec(body)![1]!;
    body = body.replace(/^[^\n]*\n?/, '');
    return El.rawBlock(codeBlockHtml(body, null, lang));
  }
  return El.rawBlock(codeBlockHtml(body, null));
}

type Frame = { el: El; inQuote: boolean };

/**
 * A line of text right after a `>` line with nothing else on it continues the quote, as in the
 * reference (its quotes take the whole block); CommonMark would end the quote there.
 */
function lazyAfterEmptyQuote(lines: string[]): string[] {
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^ {0,3}>\s*$/.test(lines[i - 1]!) && line.trim() && !/^ {0,3}>/.test(line))
      lines[i] = '> ' + line;
  }
  return lines;
}

/** Parses `src` as blocks and appends them to `parent`. */
export function renderBlocks(src: string, parent: El, s: InlineState, inQuote: boolean): void {
  const pre = preprocessLists(src);
  const fenced = preprocessFences(pre.src.split('\n'));
  const tokens = md.parse(lazyAfterEmptyQuote(fenced.lines).join('\n'), {});
  const stack: Frame[] = [{ el: parent, inQuote }];
  const top = () => stack[stack.length - 1]!;
  const open = (el: El, quote = top().inQuote) => {
    top().el.append(el);
    stack.push({ el, inQuote: quote });
  };
  /** Pops frames up to and including the one for `el` (if it is open). */
  const closeThrough = (el: El | undefined) => {
    if (!el || !stack.some((f) => f.el === el)) return;
    while (stack.length > 1 && stack.pop()!.el !== el);
  };
  const spoilers: { block: El; part: El }[] = [];
  const placed = (item: FenceItem | undefined) => {
    if (!item) return;
    if (item.kind === 'html') {
      if (item.block) top().el.append(El.rawBlock(item.html));
      else top().el.append(new El('p')).append(El.rawInline(item.html));
    } else if (item.kind === 'spoiler-open') {
      const block = new El('div', { class: 'spoiler-block' });
      open(block);
      const part = new El('div', { class: 'spoiler-header' });
      open(part);
      spoilers.push({ block, part });
    } else {
      const sp = spoilers[spoilers.length - 1];
      if (!sp) return;
      closeThrough(sp.part);
      if (item.kind === 'spoiler-middle') {
        sp.part = new El('div', { class: 'spoiler-content', 'aria-hidden': 'true' });
        sp.part.ordered = true;
        open(sp.part);
      } else {
        closeThrough(sp.block);
        spoilers.pop();
      }
    }
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    switch (t.type) {
      case 'paragraph_open': {
        const next = tokens[i + 1];
        const ph = next?.type === 'inline' ? FENCE_PLACEHOLDER.exec(next.content.trim()) : null;
        if (ph) {
          placed(fenced.items[Number(ph[1])]);
          i += 2; // the inline content and paragraph_close
        } else if (!t.hidden) open(new El('p'));
        break;
      }
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
        top().el.append(indentedCode(t.content));
        break;
      default:
        break;
    }
  }
}
