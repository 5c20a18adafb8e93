// The lexer and parser of Go's text/template (go/src/text/template/parse), ported closely so that what Go refuses
// at parse time is refused here too, with Go's wording: a ClusterClass author sees the same message either way.

/** A template that cannot be parsed or rendered; `position` is the offset in the template of the failing part. */
export class GoTemplateError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
    this.name = 'GoTemplateError';
  }
}

// ---- nodes ----

export interface TextNode {
  kind: 'text';
  pos: number;
  text: string;
}
export interface ActionNode {
  kind: 'action';
  pos: number;
  pipe: PipeNode;
}
export interface BranchNode {
  kind: 'if' | 'range' | 'with';
  pos: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
export interface ListNode {
  kind: 'list';
  pos: number;
  nodes: Node[];
}
export interface LoopControlNode {
  kind: 'break' | 'continue';
  pos: number;
}
export type Node = TextNode | ActionNode | BranchNode | ListNode | LoopControlNode;

export interface PipeNode {
  kind: 'pipe';
  pos: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface CommandNode {
  kind: 'command';
  pos: number;
  args: ArgNode[];
}
export interface NumberNode {
  kind: 'number';
  pos: number;
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  int64: bigint;
  float64: number;
}
export type ArgNode =
  | { kind: 'bool'; pos: number; value: boolean }
  | { kind: 'dot'; pos: number }
  | { kind: 'nil'; pos: number }
  | { kind: 'string'; pos: number; quoted: string; text: string }
  | { kind: 'field'; pos: number; ident: string[] }
  | { kind: 'identifier'; pos: number; ident: string }
  | ChainNode
  | VariableNode
  | NumberNode
  | PipeNode;
export interface VariableNode {
  kind: 'variable';
  pos: number;
  ident: string[];
}
export interface ChainNode {
  kind: 'chain';
  pos: number;
  node: ArgNode;
  field: string[];
}
type Delimiter = { kind: 'end' | 'else'; pos: number };
type AnyNode = Node | ArgNode | CommandNode | Delimiter;
const isDelimiter = (n: Node | Delimiter): n is Delimiter => n.kind === 'end' || n.kind === 'else';

/** Go's Node.String(), which its error messages quote as the context (`at <.a.b>`). */
export function nodeString(node: AnyNode): string {
  switch (node.kind) {
    case 'text':
      return node.text;
    case 'action':
      return `{{${nodeString(node.pipe)}}}`;
    case 'if':
    case 'range':
    case 'with': {
      const tail = node.elseList ? `{{else}}${nodeString(node.elseList)}` : '';
      return `{{${node.kind} ${nodeString(node.pipe)}}}${nodeString(node.list)}${tail}{{end}}`;
    }
    case 'list':
      return node.nodes.map(nodeString).join('');
    case 'break':
    case 'continue':
    case 'end':
    case 'else':
      return `{{${node.kind}}}`;
    case 'pipe': {
      const decl = node.decl.length
        ? `${node.decl.map(nodeString).join(', ')}${node.isAssign ? ' = ' : ' := '}`
        : '';
      return decl + node.cmds.map(nodeString).join(' | ');
    }
    case 'command':
      return node.args.map((a) => (a.kind === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'bool':
      return String(node.value);
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'string':
      return node.quoted;
    case 'number':
      return node.text;
    case 'field':
      return node.ident.map((id) => `.${id}`).join('');
    case 'identifier':
      return node.ident;
    case 'variable':
      return node.ident.join('.');
    case 'chain': {
      const head = node.node.kind === 'pipe' ? `(${nodeString(node.node)})` : nodeString(node.node);
      return head + node.field.map((f) => `.${f}`).join('');
    }
  }
}

// ---- lexer ----

type ItemType =
  | 'error'
  | 'bool'
  | 'char'
  | 'charConstant'
  | 'complex'
  | 'assign'
  | 'declare'
  | 'eof'
  | 'field'
  | 'identifier'
  | 'leftDelim'
  | 'leftParen'
  | 'number'
  | 'pipe'
  | 'rawString'
  | 'rightDelim'
  | 'rightParen'
  | 'space'
  | 'string'
  | 'text'
  | 'variable'
  | Keyword;
type Keyword =
  | 'block'
  | 'break'
  | 'continue'
  | 'dot'
  | 'define'
  | 'else'
  | 'end'
  | 'if'
  | 'nil'
  | 'range'
  | 'template'
  | 'with';
const KEYWORDS: ReadonlyMap<string, Keyword> = new Map<string, Keyword>([
  ['.', 'dot'],
  ['block', 'block'],
  ['break', 'break'],
  ['continue', 'continue'],
  ['define', 'define'],
  ['else', 'else'],
  ['end', 'end'],
  ['if', 'if'],
  ['range', 'range'],
  ['nil', 'nil'],
  ['template', 'template'],
  ['with', 'with'],
]);

interface Item {
  type: ItemType;
  pos: number;
  val: string;
  line: number;
}

const EOF = -1;
const isSpace = (r: number) => r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u;
const isAlphaNumeric = (r: number) => r === 0x5f || (r > 0 && LETTER_OR_DIGIT.test(String.fromCodePoint(r)));
const hasLeftTrimMarker = (s: string, at: number) => s[at] === '-' && isSpace(s.charCodeAt(at + 1));
const hasRightTrimMarker = (s: string, at: number) => isSpace(s.charCodeAt(at)) && s[at + 1] === '-';
const trimRightLength = (s: string) => s.length - s.replace(/[ \t\r\n]+$/, '').length;
const trimLeftLength = (s: string) => s.length - s.replace(/^[ \t\r\n]+/, '').length;

/** Go's item.String(), as parse errors show a token. */
function itemString(item: Item): string {
  if (item.type === 'eof') return 'EOF';
  if (item.type === 'error') return item.val;
  if (KEYWORDS.has(item.val) && item.type !== 'identifier') return `<${item.val}>`;
  const runes = [...item.val];
  return runes.length > 10 ? `${quoteGo(runes.slice(0, 10).join(''))}...` : quoteGo(item.val);
}

type StateFn = ((l: Lexer) => StateFn) | null;

class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  line = 1;
  startLine = 1;
  insideAction = false;
  item: Item = { type: 'eof', pos: 0, val: 'EOF', line: 1 };

  constructor(private input: string) {}

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.pos += r > 0xffff ? 2 : 1;
    if (r === 10) this.line++;
    return r;
  }
  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }
  backup(): void {
    if (this.atEOF || this.pos === 0) return;
    const low = this.input.charCodeAt(this.pos - 1);
    const pair =
      low >= 0xdc00 && low <= 0xdfff && this.pos >= 2 && this.input.charCodeAt(this.pos - 2) >= 0xd800;
    this.pos -= pair ? 2 : 1;
    if (low === 10) this.line--;
  }
  thisItem(type: ItemType): Item {
    const item = { type, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine };
    this.start = this.pos;
    this.startLine = this.line;
    return item;
  }
  emit(type: ItemType): StateFn {
    this.item = this.thisItem(type);
    return null;
  }
  ignore(): void {
    this.line += countNewlines(this.input.slice(this.start, this.pos));
    this.start = this.pos;
    this.startLine = this.line;
  }
  accept(valid: string): boolean {
    const r = this.next();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }
  acceptRun(valid: string): void {
    for (let r = this.next(); r !== EOF && valid.includes(String.fromCodePoint(r)); r = this.next());
    this.backup();
  }
  errorf(message: string): StateFn {
    this.item = { type: 'error', pos: this.start, val: message, line: this.startLine };
    this.start = 0;
    this.pos = 0;
    this.input = '';
    return null;
  }
  nextItem(): Item {
    this.item = { type: 'eof', pos: this.pos, val: 'EOF', line: this.startLine };
    let state: StateFn = this.insideAction ? lexInsideAction : lexText;
    while (state) state = state(this);
    return this.item;
  }
  rest(at = this.pos): string {
    return this.input.slice(at);
  }
  atRightDelim(): { delim: boolean; trim: boolean } {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith('}}', this.pos + 2)) {
      return { delim: true, trim: true };
    }
    return { delim: this.input.startsWith('}}', this.pos), trim: false };
  }
  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    if (r === EOF || '.,|:)('.includes(String.fromCharCode(r))) return true;
    return this.input.startsWith('}}', this.pos);
  }
  get text(): string {
    return this.input;
  }
}

const countNewlines = (s: string) => s.split('\n').length - 1;

function lexText(l: Lexer): StateFn {
  const x = l.text.indexOf('{{', l.pos);
  if (x >= 0) {
    if (x > l.pos) {
      l.pos = x;
      let trim = 0;
      if (hasLeftTrimMarker(l.text, x + 2)) trim = trimRightLength(l.text.slice(l.start, l.pos));
      l.pos -= trim;
      l.line += countNewlines(l.text.slice(l.start, l.pos));
      const item = l.thisItem('text');
      l.pos += trim;
      l.ignore();
      if (item.val.length > 0) {
        l.item = item;
        return null;
      }
    }
    return lexLeftDelim;
  }
  l.pos = l.text.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.text.slice(l.start, l.pos));
    return l.emit('text');
  }
  return l.emit('eof');
}

function lexLeftDelim(l: Lexer): StateFn {
  l.pos += 2;
  const trim = hasLeftTrimMarker(l.text, l.pos);
  const afterMarker = trim ? 2 : 0;
  if (l.text.startsWith('/*', l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  const item = l.thisItem('leftDelim');
  l.insideAction = true;
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  l.item = item;
  return null;
}

function lexComment(l: Lexer): StateFn {
  l.pos += 2;
  const x = l.text.indexOf('*/', l.pos);
  if (x < 0) return l.errorf('unclosed comment');
  l.pos = x + 2;
  const { delim, trim } = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  l.line += countNewlines(l.text.slice(l.start, l.pos));
  if (trim) l.pos += 2;
  l.pos += 2;
  if (trim) l.pos += trimLeftLength(l.rest());
  l.ignore();
  return lexText;
}

function lexRightDelim(l: Lexer): StateFn {
  const { trim } = l.atRightDelim();
  if (trim) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += 2;
  const item = l.thisItem('rightDelim');
  if (trim) {
    l.pos += trimLeftLength(l.rest());
    l.ignore();
  }
  l.insideAction = false;
  l.item = item;
  return null;
}

function lexInsideAction(l: Lexer): StateFn {
  if (l.atRightDelim().delim) {
    return l.parenDepth === 0 ? lexRightDelim : l.errorf('unclosed left paren');
  }
  const r = l.next();
  const c = r === EOF ? '' : String.fromCodePoint(r);
  if (r === EOF) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (c) {
    case '=':
      return l.emit('assign');
    case ':':
      return l.next() === 0x3d ? l.emit('declare') : l.errorf('expected :=');
    case '|':
      return l.emit('pipe');
    case '"':
      return lexQuote;
    case '`':
      return lexRawQuote;
    case '$':
      return lexVariable;
    case "'":
      return lexChar;
    case '(':
      l.parenDepth++;
      return l.emit('leftParen');
    case ')':
      l.parenDepth--;
      return l.parenDepth < 0 ? l.errorf('unexpected right paren') : l.emit('rightParen');
  }
  if (c === '.') {
    const after = l.text.charCodeAt(l.pos);
    if (l.pos < l.text.length && (after < 0x30 || after > 0x39)) return lexField;
  }
  if (c === '.' || c === '+' || c === '-' || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r < 0x7f && r >= 0x20) return l.emit('char');
  return l.errorf(`unrecognized character in action: ${formatRune(r)}`);
}

/** Go's %#U: `U+0041 'A'`. */
function formatRune(r: number): string {
  const hex = `U+${r.toString(16).toUpperCase().padStart(4, '0')}`;
  return r === EOF ? 'U+FFFFFFFFFFFFFFFF' : `${hex} '${String.fromCodePoint(r)}'`;
}

function lexSpace(l: Lexer): StateFn {
  let spaces = 0;
  while (isSpace(l.peek())) {
    l.next();
    spaces++;
  }
  if (hasRightTrimMarker(l.text, l.pos - 1) && l.text.startsWith('}}', l.pos + 1)) {
    l.backup();
    if (spaces === 1) return lexRightDelim;
  }
  return l.emit('space');
}

function lexIdentifier(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.text.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${formatRune(r)}`);
    const keyword = KEYWORDS.get(word);
    if (keyword && keyword !== 'dot') return l.emit(keyword);
    if (word === 'true' || word === 'false') return l.emit('bool');
    return l.emit('identifier');
  }
}

const lexField = (l: Lexer) => lexFieldOrVariable(l, 'field');

function lexVariable(l: Lexer): StateFn {
  if (l.atTerminator()) return l.emit('variable');
  return lexFieldOrVariable(l, 'variable');
}

function lexFieldOrVariable(l: Lexer, type: 'field' | 'variable'): StateFn {
  if (l.atTerminator()) return l.emit(type === 'variable' ? 'variable' : 'dot');
  let r: number;
  for (r = l.next(); isAlphaNumeric(r); r = l.next());
  l.backup();
  if (!l.atTerminator()) return l.errorf(`bad character ${formatRune(r)}`);
  return l.emit(type);
}

function lexChar(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 10) continue;
    }
    if (r === EOF || r === 10) return l.errorf('unterminated character constant');
    if (r === 0x27) return l.emit('charConstant');
  }
}

function lexNumber(l: Lexer): StateFn {
  if (!scanNumber(l)) return l.errorf(`bad number syntax: ${quoteGo(l.text.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!scanNumber(l) || l.text[l.pos - 1] !== 'i') {
      return l.errorf(`bad number syntax: ${quoteGo(l.text.slice(l.start, l.pos))}`);
    }
    return l.emit('complex');
  }
  return l.emit('number');
}

function scanNumber(l: Lexer): boolean {
  l.accept('+-');
  let digits = '0123456789_';
  if (l.accept('0')) {
    if (l.accept('xX')) digits = '0123456789abcdefABCDEF_';
    else if (l.accept('oO')) digits = '01234567_';
    else if (l.accept('bB')) digits = '01_';
  }
  l.acceptRun(digits);
  if (l.accept('.')) l.acceptRun(digits);
  if (digits.length === 11 && l.accept('eE')) {
    l.accept('+-');
    l.acceptRun('0123456789_');
  }
  if (digits.length === 23 && l.accept('pP')) {
    l.accept('+-');
    l.acceptRun('0123456789_');
  }
  l.accept('i');
  if (isAlphaNumeric(l.peek())) {
    l.next();
    return false;
  }
  return true;
}

function lexQuote(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 10) continue;
    }
    if (r === EOF || r === 10) return l.errorf('unterminated quoted string');
    if (r === 0x22) return l.emit('string');
  }
}

function lexRawQuote(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.errorf('unterminated raw quoted string');
    if (r === 0x60) return l.emit('rawString');
  }
}

// ---- literals ----

const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };

/** strconv.Unquote for "…", `…` and '…'; null where Go reports "invalid syntax". Returns the code points. */
export function unquoteGo(quoted: string): number[] | null {
  const q = quoted[0];
  if (quoted.length < 2 || quoted[quoted.length - 1] !== q) return null;
  const body = quoted.slice(1, -1);
  if (q === '`')
    return body.includes('`') ? null : [...body.replace(/\r/g, '')].map((c) => c.codePointAt(0)!);
  if (q !== '"' && q !== "'") return null;
  const out: number[] = [];
  const bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length) out.push(...[...Buffer.from(bytes).toString('utf8')].map((c) => c.codePointAt(0)!));
    bytes.length = 0;
  };
  for (let i = 0; i < body.length;) {
    const c = body[i]!;
    if (c === q || c === '\n') return null;
    if (c !== '\\') {
      flushBytes();
      const cp = body.codePointAt(i)!;
      out.push(cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) return null;
    if (e in SIMPLE_ESCAPES) {
      flushBytes();
      out.push(SIMPLE_ESCAPES[e]!);
      i += 2;
    } else if (e === q) {
      flushBytes();
      out.push(q.charCodeAt(0));
      i += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) return null;
      const v = parseInt(hex, 16);
      if (e === 'x') {
        // \x and octal escapes are bytes in Go, possibly half of a UTF-8 sequence.
        if (q === "'") {
          flushBytes();
          out.push(v);
        } else bytes.push(v);
      } else {
        if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return null;
        flushBytes();
        out.push(v);
      }
      i += 2 + n;
    } else if (e >= '0' && e <= '7') {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return null;
      if (q === "'") {
        flushBytes();
        out.push(parseInt(oct, 8));
      } else bytes.push(parseInt(oct, 8));
      i += 4;
    } else return null;
  }
  flushBytes();
  if (q === "'" && out.length !== 1) return null;
  return out;
}

/** Go's strconv.Quote (and %q): printable runes kept, the rest escaped. */
export function quoteGo(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    out += quoteRuneBody(r, '"', asciiOnly);
  }
  return `${out}"`;
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
export const isPrintRune = (r: number) => PRINTABLE.test(String.fromCodePoint(r));

export function quoteRuneBody(r: number, quote: string, asciiOnly = false): string {
  const c = String.fromCodePoint(r);
  if (c === quote || c === '\\') return `\\${c}`;
  if (asciiOnly ? r < 0x7f && r >= 0x20 : isPrintRune(r) && !(r >= 0xd800 && r < 0xe000)) return c;
  const named: Record<number, string> = {
    7: '\\a',
    8: '\\b',
    12: '\\f',
    10: '\\n',
    13: '\\r',
    9: '\\t',
    11: '\\v',
  };
  if (named[r]) return named[r]!;
  if (r >= 0xd800 && r < 0xe000) return '\\ufffd';
  if (r < 0x20 || r === 0x7f) return `\\x${r.toString(16).padStart(2, '0')}`;
  if (r < 0x10000) return `\\u${r.toString(16).padStart(4, '0')}`;
  return `\\U${r.toString(16).padStart(8, '0')}`;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** strconv's underscoreOK: underscores only between digits, or between a base prefix and a digit. */
function underscoreOK(text: string): boolean {
  let s = text.replace(/^[+-]/, '');
  let saw = '^';
  const hex = /^0[xX]/.test(s);
  if (/^0[bBoOxX]/.test(s)) {
    s = s.slice(2);
    saw = '0';
  }
  for (const c of s) {
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

/** strconv.ParseInt/ParseUint with base 0 (prefixes, underscores); null on a syntax error. */
export function parseGoInteger(text: string): bigint | null {
  const m = /^([+-]?)(0[xX]|0[oO]|0[bB]|0(?=[0-9_]))?([0-9a-fA-F_]+)$/.exec(text);
  if (!m || (text.includes('_') && !underscoreOK(text))) return null;
  const [, sign, prefix = '', digits] = m;
  const base = /^0[xX]$/.test(prefix) ? 16 : /^0[bB]$/.test(prefix) ? 2 : prefix ? 8 : 10;
  const clean = digits!.replace(/_/g, '');
  if (!clean) return null;
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base]!;
  if (!valid.test(clean)) return null;
  const literal = base === 16 ? `0x${clean}` : base === 8 ? `0o${clean}` : base === 2 ? `0b${clean}` : clean;
  const value = BigInt(literal);
  return sign === '-' ? -value : value;
}

/** strconv.ParseFloat for the literals the lexer lets through; null on a syntax or range error. */
export function parseGoFloat(text: string): number | null {
  if (text.includes('_') && !underscoreOK(text)) return null;
  const clean = text.replace(/_/g, '');
  let value: number;
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(clean);
  if (hex) {
    const [, sign, int = '', frac = '', exp] = hex;
    if (!int && !frac) return null;
    const mantissa = parseInt(`${int}${frac}` || '0', 16);
    value = mantissa * 2 ** (Number(exp) - 4 * frac.length);
    if (sign === '-') value = -value;
  } else if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(clean)) {
    value = Number(clean);
  } else return null;
  return Number.isFinite(value) ? value : null;
}

function newNumber(pos: number, text: string, type: ItemType): NumberNode {
  const n: NumberNode = {
    kind: 'number',
    pos,
    text,
    isInt: false,
    isUint: false,
    isFloat: false,
    int64: 0n,
    float64: 0,
  };
  if (type === 'charConstant') {
    const runes = unquoteGo(text);
    if (!runes) {
      throw new Error(/^'.+'$/su.test(text) ? `malformed character constant: ${text}` : 'invalid syntax');
    }
    Object.assign(n, {
      isInt: true,
      isUint: true,
      isFloat: true,
      int64: BigInt(runes[0]!),
      float64: runes[0]!,
    });
    return n;
  }
  if (type === 'complex' || text.endsWith('i')) throw new Error(`complex numbers are not supported: ${text}`);
  const int = parseGoInteger(text);
  if (int !== null && int >= 0n && int <= UINT64_MAX) n.isUint = true;
  if (int !== null && int >= INT64_MIN && int <= INT64_MAX) {
    n.isInt = true;
    n.int64 = int;
    if (int === 0n) n.isUint = true;
  }
  if (n.isInt || n.isUint) {
    n.isFloat = true;
    n.float64 = Number(int);
  } else {
    const f = parseGoFloat(text);
    if (f !== null) {
      if (!/[.eEpP]/.test(text)) throw new Error(`integer overflow: ${quoteGo(text)}`);
      n.isFloat = true;
      n.float64 = f;
      if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(f);
      }
      if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) n.isUint = true;
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) throw new Error(`illegal number syntax: ${quoteGo(text)}`);
  return n;
}

// ---- parser ----

export interface ParseOptions {
  name: string;
  /** Whether a function of that name exists; null when it exists in Go but this port lacks it. */
  hasFunction: (name: string) => boolean | null;
  maxDepth: number;
}

/** Parses a template as Go's (*Template).Parse does; throws GoTemplateError. */
export function parseTemplate(text: string, options: ParseOptions): ListNode {
  return new Parser(text, options).parse();
}

class Parser {
  private lex: Lexer;
  private token: Item[] = [];
  private peekCount = 0;
  private vars = ['$'];
  private rangeDepth = 0;
  private depth = 0;
  private actionLine = 0;

  constructor(
    text: string,
    private options: ParseOptions,
  ) {
    this.lex = new Lexer(text);
  }

  parse(): ListNode {
    const root: ListNode = { kind: 'list', pos: this.peek().pos, nodes: [] };
    while (this.peek().type !== 'eof') {
      const n = this.textOrAction();
      if (isDelimiter(n)) this.errorf(`unexpected ${nodeString(n)}`);
      root.nodes.push(n);
    }
    return root;
  }

  private errorf(message: string, pos = this.token[0]?.pos): never {
    throw new GoTemplateError(`template: ${this.options.name}:${this.token[0]?.line ?? 1}: ${message}`, pos);
  }

  private next(): Item {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.lex.nextItem();
    return this.token[this.peekCount]!;
  }
  private backup(): void {
    this.peekCount++;
  }
  private backup2(t1: Item): void {
    this.token[1] = t1;
    this.peekCount = 2;
  }
  private backup3(t2: Item, t1: Item): void {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }
  private peek(): Item {
    if (this.peekCount > 0) return this.token[this.peekCount - 1]!;
    this.peekCount = 1;
    this.token[0] = this.lex.nextItem();
    return this.token[0];
  }
  private nextNonSpace(): Item {
    let token: Item;
    do token = this.next();
    while (token.type === 'space');
    return token;
  }
  private peekNonSpace(): Item {
    const token = this.nextNonSpace();
    this.backup();
    return token;
  }
  private expect(type: ItemType, context: string): Item {
    const token = this.nextNonSpace();
    if (token.type !== type) this.unexpected(token, context);
    return token;
  }
  private unexpected(token: Item, context: string): never {
    if (token.type === 'error') {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.options.name}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(token)}${extra}`, token.pos);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`, token.pos);
  }

  private enter(pos: number): void {
    if (++this.depth > this.options.maxDepth) {
      this.errorf(`nesting is deeper than the ${this.options.maxDepth} allowed`, pos);
    }
  }

  private itemList(): { list: ListNode; next: Delimiter } {
    const list: ListNode = { kind: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().type !== 'eof') {
      const n = this.textOrAction();
      if (isDelimiter(n)) return { list, next: n };
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): Node | Delimiter {
    const token = this.nextNonSpace();
    if (token.type === 'text') return { kind: 'text', pos: token.pos, text: token.val };
    if (token.type !== 'leftDelim') this.unexpected(token, 'input');
    this.actionLine = token.line;
    try {
      return this.action();
    } finally {
      this.actionLine = 0;
    }
  }

  private action(): Node | Delimiter {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'block':
      case 'define':
      case 'template':
        this.errorf(`{{${token.type}}} is not supported`, token.pos);
      // eslint-disable-next-line no-fallthrough
      case 'break':
      case 'continue': {
        const end = this.nextNonSpace();
        if (end.type !== 'rightDelim') this.unexpected(end, `{{${token.type}}}`);
        if (this.rangeDepth === 0) this.errorf(`{{${token.type}}} outside {{range}}`);
        return { kind: token.type, pos: token.pos };
      }
      case 'else': {
        const peek = this.peekNonSpace();
        if (peek.type === 'if' || peek.type === 'with') return { kind: 'else', pos: peek.pos };
        return { kind: 'else', pos: this.expect('rightDelim', 'else').pos };
      }
      case 'end':
        return { kind: 'end', pos: this.expect('rightDelim', 'end').pos };
      case 'if':
      case 'range':
      case 'with':
        return this.control(token.type, token.pos);
    }
    this.backup();
    const pos = this.peek().pos;
    return { kind: 'action', pos, pipe: this.pipeline('command', 'rightDelim') };
  }

  private control(context: 'if' | 'range' | 'with', pos: number): BranchNode {
    this.enter(pos);
    const varsMark = this.vars.length;
    const pipe = this.pipeline(context, 'rightDelim');
    if (context === 'range') this.rangeDepth++;
    const { list, next: first } = this.itemList();
    let next = first;
    if (context === 'range') this.rangeDepth--;
    let elseList: ListNode | null = null;
    if (next.kind === 'else') {
      // `{{else if}}` and `{{else with}}` nest a second control whose {{end}} also closes this one.
      const peek = this.peek().type;
      if ((context === 'if' && peek === 'if') || (context === 'with' && peek === 'with')) {
        const token = this.next();
        elseList = { kind: 'list', pos: next.pos, nodes: [this.control(context, token.pos)] };
      } else {
        ({ list: elseList, next } = this.itemList());
        if (next.kind !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
      }
    }
    this.vars.length = varsMark;
    this.depth--;
    return { kind: context, pos: pipe.pos, pipe, list, elseList };
  }

  private pipeline(context: string, end: ItemType): PipeNode {
    const pipe: PipeNode = {
      kind: 'pipe',
      pos: this.peekNonSpace().pos,
      isAssign: false,
      decl: [],
      cmds: [],
    };
    for (;;) {
      const v = this.peekNonSpace();
      if (v.type !== 'variable') break;
      this.next();
      const afterVariable = this.peek();
      const next = this.peekNonSpace();
      if (next.type === 'assign' || next.type === 'declare') {
        pipe.isAssign = next.type === 'assign';
        this.nextNonSpace();
        pipe.decl.push({ kind: 'variable', pos: v.pos, ident: [v.val] });
        this.vars.push(v.val);
      } else if (next.type === 'char' && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push({ kind: 'variable', pos: v.pos, ident: [v.val] });
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const t = this.peekNonSpace().type;
          if (t === 'variable' || t === 'rightDelim' || t === 'rightParen') continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (afterVariable.type === 'space') {
        this.backup3(v, afterVariable);
      } else {
        this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.type === end) {
        if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
        pipe.cmds.slice(1).forEach((c, i) => {
          if (['bool', 'dot', 'nil', 'number', 'string'].includes(c.args[0]!.kind)) {
            this.errorf(`non executable command in pipeline stage ${i + 2}`);
          }
        });
        return pipe;
      }
      switch (token.type) {
        case 'bool':
        case 'charConstant':
        case 'complex':
        case 'dot':
        case 'field':
        case 'identifier':
        case 'number':
        case 'nil':
        case 'rawString':
        case 'string':
        case 'variable':
        case 'leftParen':
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  private command(): CommandNode {
    const cmd: CommandNode = { kind: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.type === 'space') continue;
      if (token.type === 'rightDelim' || token.type === 'rightParen') this.backup();
      else if (token.type !== 'pipe') this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): ArgNode | null {
    const node = this.term();
    if (!node || this.peek().type !== 'field') return node;
    const pos = this.peek().pos;
    const field: string[] = [];
    while (this.peek().type === 'field') field.push(this.next().val.slice(1));
    switch (node.kind) {
      case 'field':
        return { kind: 'field', pos, ident: [...node.ident, ...field] };
      case 'variable':
        return { kind: 'variable', pos, ident: [...node.ident, ...field] };
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        this.errorf(`unexpected . after term ${quoteGo(nodeString(node))}`);
    }
    return { kind: 'chain', pos, node, field };
  }

  private term(): ArgNode | null {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'identifier': {
        const known = this.options.hasFunction(token.val);
        if (known === false) this.errorf(`function ${quoteGo(token.val)} not defined`, token.pos);
        if (known === null) this.errorf(`function ${quoteGo(token.val)} is not supported`, token.pos);
        return { kind: 'identifier', pos: token.pos, ident: token.val };
      }
      case 'dot':
        return { kind: 'dot', pos: token.pos };
      case 'nil':
        return { kind: 'nil', pos: token.pos };
      case 'variable': {
        const name = token.val.split('.')[0]!;
        if (!this.vars.includes(name)) this.errorf(`undefined variable ${quoteGo(name)}`, token.pos);
        return { kind: 'variable', pos: token.pos, ident: token.val.split('.') };
      }
      case 'field':
        return { kind: 'field', pos: token.pos, ident: [token.val.slice(1)] };
      case 'bool':
        return { kind: 'bool', pos: token.pos, value: token.val === 'true' };
      case 'charConstant':
      case 'complex':
      case 'number':
        try {
          return newNumber(token.pos, token.val, token.type);
        } catch (error) {
          this.errorf((error as Error).message, token.pos);
        }
      // eslint-disable-next-line no-fallthrough
      case 'leftParen': {
        this.enter(token.pos);
        const pipe = this.pipeline('parenthesized pipeline', 'rightParen');
        this.depth--;
        return pipe;
      }
      case 'string':
      case 'rawString': {
        const runes = unquoteGo(token.val);
        if (!runes) this.errorf('invalid syntax', token.pos);
        return {
          kind: 'string',
          pos: token.pos,
          quoted: token.val,
          text: runes.map((r) => String.fromCodePoint(r)).join(''),
        };
      }
    }
    this.backup();
    return null;
  }
}
