/**
 * The languages code blocks may name: the table of the reference highlighter's lexer names and
 * aliases (`py2` → `Python 2.x`), the Prism grammar that tokenizes each, and Prism itself, loaded
 * with a grammar's first use (so plain messages never pay for it).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export type PrismToken = { type: string; alias?: string | string[]; content: PrismStream };
export type PrismStream = string | PrismToken | (string | PrismToken)[];
type PrismApi = {
  languages: Record<string, unknown>;
  tokenize(text: string, grammar: unknown): (string | PrismToken)[];
};

/** [Pygments' lexer name, Prism's grammar (absent: not highlighted), aliases…]. */
const LANGUAGES: [string, string | null, ...string[]][] = [
  ['Python', 'python', 'python', 'py', 'sage', 'python3', 'py3', 'bazel', 'starlark'],
  ['Python 2.x', 'python', 'python2', 'py2'],
  ['Python console session', 'python', 'pycon'],
  ['JavaScript', 'javascript', 'javascript', 'js', 'esm'],
  ['TypeScript', 'typescript', 'typescript', 'ts'],
  ['JSON', 'json', 'json', 'json-object'],
  ['Bash', 'bash', 'bash', 'sh', 'ksh', 'zsh', 'shell'],
  ['Bash Session', 'shell-session', 'console', 'shell-session'],
  ['C', 'c', 'c'],
  ['C++', 'cpp', 'cpp', 'c++'],
  ['C#', 'csharp', 'csharp', 'c#', 'cs'],
  ['Java', 'java', 'java'],
  ['Go', 'go', 'go', 'golang'],
  ['Rust', 'rust', 'rust', 'rs'],
  ['Ruby', 'ruby', 'ruby', 'rb', 'duby'],
  ['PHP', 'php', 'php', 'php3', 'php4', 'php5'],
  ['CSS+PHP', 'php', 'css+php'],
  ['HTML+PHP', 'php', 'html+php'],
  ['JavaScript+PHP', 'php', 'javascript+php', 'js+php'],
  ['XML+PHP', 'php', 'xml+php'],
  ['HTML', 'markup', 'html'],
  ['XML', 'markup', 'xml'],
  ['CSS', 'css', 'css'],
  ['SCSS', 'scss', 'scss'],
  ['Sass', 'sass', 'sass'],
  ['SQL', 'sql', 'sql'],
  ['MySQL', 'sql', 'mysql'],
  ['PostgreSQL SQL dialect', 'sql', 'postgresql', 'postgres'],
  ['YAML', 'yaml', 'yaml'],
  ['TOML', 'toml', 'toml'],
  ['Markdown', 'markdown', 'markdown', 'md'],
  ['Diff', 'diff', 'diff', 'udiff'],
  ['TeX', 'latex', 'tex', 'latex'],
  ['Haskell', 'haskell', 'haskell', 'hs'],
  ['Kotlin', 'kotlin', 'kotlin'],
  ['Swift', 'swift', 'swift'],
  ['Scala', 'scala', 'scala'],
  ['Perl', 'perl', 'perl', 'pl'],
  ['Lua', 'lua', 'lua'],
  ['S', 'r', 'splus', 's', 'r'],
  ['Text only', null, 'text'],
  ['Docker', 'docker', 'docker', 'dockerfile'],
  ['INI', 'ini', 'ini', 'cfg', 'dosini'],
  ['Makefile', 'makefile', 'make', 'makefile', 'mf', 'bsdmake'],
  ['Nginx configuration file', 'nginx', 'nginx'],
  ['PowerShell', 'powershell', 'powershell', 'pwsh', 'posh', 'ps1', 'psm1'],
  ['Objective-C', 'objectivec', 'objective-c', 'objectivec', 'obj-c', 'objc'],
  ['Elixir', 'elixir', 'elixir', 'ex', 'exs'],
  ['Erlang', 'erlang', 'erlang'],
  ['Clojure', 'clojure', 'clojure', 'clj'],
  ['OCaml', 'ocaml', 'ocaml'],
  ['GraphQL', 'graphql', 'graphql'],
  ['Dart', 'dart', 'dart'],
  ['Elm', 'elm', 'elm'],
  ['F#', 'fsharp', 'fsharp', 'f#'],
  ['Groovy', 'groovy', 'groovy'],
  ['Julia', 'julia', 'julia', 'jl'],
  ['Matlab', 'matlab', 'matlab'],
  ['Nim', 'nim', 'nimrod', 'nim'],
  ['Nix', 'nix', 'nixos', 'nix'],
  ['Delphi', 'pascal', 'delphi', 'pas', 'pascal', 'objectpascal'],
  ['Prolog', 'prolog', 'prolog'],
  ['Protocol Buffer', 'protobuf', 'protobuf', 'proto'],
  ['Racket', 'racket', 'racket', 'rkt'],
  ['Scheme', 'scheme', 'scheme', 'scm'],
  ['Common Lisp', 'lisp', 'common-lisp', 'cl', 'lisp'],
  ['VimL', 'vim', 'vim'],
  ['Zig', 'zig', 'zig'],
  ['CoffeeScript', 'coffeescript', 'coffeescript', 'coffee-script', 'coffee'],
  ['Handlebars', 'handlebars', 'handlebars'],
  ['HTTP', 'http', 'http'],
  ['Batchfile', 'batch', 'batch', 'bat', 'dosbatch', 'winbatch'],
  ['reStructuredText', 'rest', 'restructuredtext', 'rst', 'rest'],
  ['Terraform', 'hcl', 'terraform', 'tf', 'hcl'],
  ['Solidity', 'solidity', 'solidity'],
  ['Ada', 'ada', 'ada', 'ada95', 'ada2005'],
  ['Fortran', 'fortran', 'fortran', 'f90'],
  ['NASM', 'nasm', 'nasm'],
  ['Awk', null, 'awk', 'gawk', 'mawk', 'nawk'],
  ['AppleScript', 'applescript', 'applescript'],
  ['D', 'd', 'd'],
  ['Crystal', 'crystal', 'cr', 'crystal'],
  ['Verilog', 'verilog', 'verilog', 'v'],
  ['vhdl', 'vhdl', 'vhdl'],
];

type Lang = { name: string; prism: string | null };
const BY_ALIAS = new Map<string, Lang>();
for (const [name, prism, ...aliases] of LANGUAGES)
  for (const a of aliases) BY_ALIAS.set(a, { name, prism });

/** The language as the reference names it in `data-code-language` (unknown: as written). */
export function languageName(lang: string): string {
  return BY_ALIAS.get(lang.toLowerCase())?.name ?? lang;
}

let prism: PrismApi | null = null;
const loaded = new Set<string>();

export function grammar(name: string): unknown {
  if (!prism) {
    prism = require('prismjs') as PrismApi;
  }
  if (!loaded.has(name)) {
    loaded.add(name);
    const load = require('prismjs/components/index.js') as ((langs: string[]) => void) & {
      silent?: boolean;
    };
    load.silent = true;
    load([name]);
  }
  return prism.languages[name];
}

/** The language an alias (as written after the fence, any case) names, if known. */
export function languageOf(alias: string): Lang | undefined {
  return BY_ALIAS.get(alias.toLowerCase());
}

/** Prism's token stream of `code` under a grammar `grammar()` returned. */
export function prismTokenize(code: string, g: unknown): (string | PrismToken)[] {
  return prism!.tokenize(code, g);
}
