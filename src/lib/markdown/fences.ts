/**
 * Fenced blocks, read line by line before the block parser sees the text, as the reference
 * reads them: a fence opens only at the start of a line (``` or ~~~, then an optional language
 * and header); a block closes only at a line that is exactly its own fence; `quote` and
 * `spoiler` blocks may hold further fences, code and `math` blocks may not; a block still open
 * at the end closes there. Code and math become placeholders for their finished HTML; a quote
 * becomes `> `-prefixed lines; a spoiler becomes markers around its header and content, which
 * the block parser then parses with the rest of the message.
 */
import { languageName } from './highlight-languages.js';
import { highlightCode } from './highlight.js';
import { renderTex } from './tex.js';

/** What a placeholder line stands for. */
export type FenceItem =
  | { kind: 'html'; html: string; block: boolean }
  | { kind: 'spoiler-open' | 'spoiler-middle' | 'spoiler-close' };

export const FENCE_RE =
  /^(~{3,}|`{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+,\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;

/** The placeholder for item `n`: a line of its own (STX, `f`, the number, ETX). */
// eslint-disable-next-line no-control-regex -- the renderer's own delimiters
export const FENCE_PLACEHOLDER = /^\u0002f(\d+)\u0003$/;

type Handler = {
  fence: string | null;
  lines: string[];
  handle(line: string): void;
  done(): void;
};

/** Escapes as the reference's TeX error span does (its template escaping). */
function escapeHtmlFull(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}

/** A code block's HTML, as the reference writes it (language named as its highlighter names it). */
export function codeBlockHtml(
  code: string,
  lang: string | null,
  highlightAs: string | null = lang,
): string {
  const body = code.replace(/^\n+|\n+$/g, '');
  const inner = highlightCode(body + '\n', highlightAs, lang === null);
  const attr = lang ? ` data-code-language="${escapeHtmlFull(languageName(lang))}"` : '';
  return `<div class="codehilite"${attr}><pre><span></span><code>${inner}</code></pre></div>`;
}

function texHtml(text: string): string {
  return text
    .split('\n\n')
    .map(
      (para) => renderTex(para, true) ?? `<span class="tex-error">${escapeHtmlFull(para)}</span>`,
    )
    .join('\n\n');
}

/** Rewrites `lines`, fences replaced; `items[n]` is what placeholder n stands for. */
export function preprocessFences(lines: readonly string[]): {
  lines: string[];
  items: FenceItem[];
} {
  const output: string[] = [];
  const items: FenceItem[] = [];
  const stack: Handler[] = [];
  const placeholder = (item: FenceItem) => {
    items.push(item);
    return `\u0002f${items.length - 1}\u0003`;
  };

  const base = (fence: string, emit: (text: string) => string[], into: string[]): Handler => {
    const h: Handler = {
      fence,
      lines: [],
      handle(line) {
        if (line.trimEnd() === fence) h.done();
        else h.lines.push(line.trimEnd());
      },
      done() {
        if (h.lines.length > 0) into.push('', ...emit(h.lines.join('\n')), '');
        stack.pop();
      },
    };
    return h;
  };

  const openFence = (line: string, into: string[]): boolean => {
    const m = FENCE_RE.exec(line);
    if (!m) return false;
    const fence = m[1]!;
    const lang = m[2] ? m[2].toLowerCase() : null;
    const header = m[3] ?? null;
    let h: Handler;
    if (lang === 'quote' || lang === 'quoted') {
      h = base(fence, (text) => text.split('\n').map((l) => '> ' + l), into);
      h.handle = (l) => {
        if (l.trimEnd() === fence) h.done();
        else if (!openFence(l, h.lines)) h.lines.push(l);
      };
    } else if (lang === 'spoiler') {
      h = base(
        fence,
        (text) => {
          const parts = [placeholder({ kind: 'spoiler-open' })];
          if (header !== null) parts.push(header);
          parts.push(placeholder({ kind: 'spoiler-middle' }), text);
          parts.push(placeholder({ kind: 'spoiler-close' }));
          return parts.join('\n\n').split('\n');
        },
        into,
      );
      h.handle = (l) => {
        if (l.trimEnd() === fence) h.done();
        else if (!openFence(l, h.lines)) h.lines.push(l);
      };
    } else if (lang === 'math') {
      h = base(
        fence,
        (text) => [placeholder({ kind: 'html', html: texHtml(text), block: false })],
        into,
      );
    } else {
      h = base(
        fence,
        (text) => [placeholder({ kind: 'html', html: codeBlockHtml(text, lang), block: true })],
        into,
      );
    }
    stack.push(h);
    return true;
  };

  for (const line of lines) {
    const top = stack[stack.length - 1];
    if (top) top.handle(line);
    else if (!openFence(line, output)) output.push(line);
  }
  while (stack.length > 0) stack[stack.length - 1]!.done();
  return { lines: output, items };
}
