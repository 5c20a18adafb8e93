// The values a template computes with, Go's fmt printing of them, and the functions a ClusterClass template may call:
// text/template's builtins and sprig's hermetic ones. Each function keeps its Go signature, because Go checks the
// arguments against it (`repeat (add 1 1) "x"` fails: add returns int64 and repeat wants int), and its Go results.
import { createHash } from 'node:crypto';
import { isPrintRune, quoteGo, quoteRuneBody, parseGoInteger, parseGoFloat } from './go-template-parse.js';

// ---- values ----

export type GoIntType = 'int' | 'int64' | 'uint8';

/** A Go integer; JSON numbers are float64 in Go (upstream decodes variables into interface{}) and stay JS numbers. */
export class GoInt {
  readonly value: bigint;
  constructor(
    value: bigint,
    readonly type: GoIntType = 'int',
  ) {
    this.value = type === 'uint8' ? BigInt.asUintN(8, value) : BigInt.asIntN(64, value);
  }
}

/** A Go slice; `elem` is its element type, which %T, sprig's reflection and equality see. */
export class GoList {
  constructor(
    readonly items: GoValue[],
    readonly elem: 'interface {}' | 'string' | 'int' = 'interface {}',
    readonly isNil = false,
  ) {}
}

/** A Go map with string keys; sprig's set and unset change it in place, as in Go. */
export class GoMap {
  constructor(
    readonly entries: Map<string, GoValue> = new Map(),
    readonly elem: 'interface {}' | 'string' = 'interface {}',
    readonly isNil = false,
  ) {}
}

/** `undefined` is Go's invalid reflect.Value (printed `<no value>`); `null` is a nil interface{} (printed `<nil>`). */
export type GoValue = undefined | null | boolean | string | number | GoInt | GoList | GoMap;

/** A limit of the evaluation was reached. */
export class LimitError extends Error {}

/** What a function may spend: it charges work, and keeps the strings it makes under the output bound. */
export interface Budget {
  readonly maxBytes: number;
  charge(units: number): void;
}

/** An error a Go function returned or panicked with; the caller reports it as `error calling NAME: …`. */
export class FuncError extends Error {}

const NIL_DEREF = 'runtime error: invalid memory address or nil pointer dereference';

export function goTypeName(v: GoValue): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float64';
  if (v instanceof GoInt) return v.type;
  if (v instanceof GoList) return `[]${v.elem}`;
  return `map[string]${v.elem}`;
}

/** reflect.Kind's name, for sprig's kindOf and its "Cannot … on type X" panics. */
export function goKindName(v: GoValue): string {
  if (v === undefined || v === null) return 'invalid';
  if (v instanceof GoList) return 'slice';
  if (v instanceof GoMap) return 'map';
  return goTypeName(v);
}

/** Converts JSON data as Go's json.Unmarshal into interface{} would. */
export function fromJSON(value: unknown, depth = 0): GoValue {
  if (depth > 1000) throw new LimitError('data is nested too deeply');
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('data holds a number JSON cannot carry');
      return value;
    case 'object': {
      if (Array.isArray(value)) return new GoList(value.map((v) => fromJSON(v, depth + 1)));
      const entries = new Map<string, GoValue>();
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v !== undefined) entries.set(k, fromJSON(v, depth + 1));
      }
      return new GoMap(entries);
    }
  }
  throw new TypeError(`data holds a ${typeof value}, which is not JSON`);
}

/** Go compares strings by bytes; UTF-8 byte order is code point order. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : 1;
}

const sortedKeys = (m: GoMap) => [...m.entries.keys()].sort(compareGoStrings);
const utf8 = (s: string) => Buffer.from(s, 'utf8');
export const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** text/template's truth (and sprig's `empty`, its negation). */
export function isTrue(v: GoValue): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (v instanceof GoInt) return v.value !== 0n;
  if (v instanceof GoList) return v.items.length > 0;
  return v.entries.size > 0;
}

// ---- fmt ----

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  sharpV: boolean;
  wid?: number;
  prec?: number;
}
const noFlags = (): Flags => ({
  plus: false,
  minus: false,
  sharp: false,
  space: false,
  zero: false,
  sharpV: false,
});

/** Builds fmt's output, refusing to grow past the bound (a map that holds itself must not print forever). */
class Printer {
  out = '';
  private calls = 0;
  constructor(private budget: Budget) {}
  tick(): void {
    if (++this.calls % 64 === 0) this.budget.charge(1);
  }
  write(s: string): void {
    this.out += s;
    if (this.out.length > this.budget.maxBytes) {
      throw new LimitError(`output would exceed ${this.budget.maxBytes} bytes`);
    }
  }
}

function pad(p: Printer, f: Flags, s: string): void {
  const width = f.wid ?? 0;
  const n = [...s].length;
  if (n >= width) return p.write(s);
  const fill = (f.zero && !f.minus ? '0' : ' ').repeat(width - n);
  p.write(f.minus ? s + ' '.repeat(width - n) : fill + s);
}

function badVerb(p: Printer, f: Flags, verb: string, arg: GoValue, depth: number): void {
  p.write(`%!${verb}(`);
  if (arg === undefined || arg === null) p.write('<nil>');
  else {
    p.write(`${goTypeName(arg)}=`);
    printValue(p, f, arg, 'v', depth);
  }
  p.write(')');
}

function fmtInteger(p: Printer, f: Flags, v: GoInt, verb: string): void {
  const signed = v.type !== 'uint8';
  const neg = signed && v.value < 0n;
  let abs = neg ? -v.value : v.value;
  if (verb === 'c') return pad(p, f, String.fromCodePoint(Number(abs <= 0x10ffffn ? abs : 0xfffdn)));
  if (verb === 'q')
    return pad(p, f, `'${quoteRuneBody(Number(abs <= 0x10ffffn ? abs : 0xfffdn), "'", f.plus)}'`);
  if (verb === 'U') {
    let s = `U+${abs
      .toString(16)
      .toUpperCase()
      .padStart(f.prec ?? 4, '0')}`;
    if (f.sharp && abs <= 0x10ffffn && isPrintRune(Number(abs)))
      s += ` '${String.fromCodePoint(Number(abs))}'`;
    return pad(p, f, s);
  }
  const base = { d: 10, v: 10, b: 2, o: 8, O: 8, x: 16, X: 16 }[verb];
  if (base === undefined) return badVerb(p, f, verb, v, 0);
  if (f.sharpV && verb === 'v' && !signed) abs = v.value;
  let digits = abs.toString(base);
  if (verb === 'X') digits = digits.toUpperCase();
  let prec = f.prec;
  if (prec === undefined && f.zero && !f.minus && f.wid !== undefined) {
    prec = f.wid - (neg || f.plus || f.space ? 1 : 0);
  }
  if (prec !== undefined) {
    if (prec === 0 && abs === 0n) digits = '';
    digits = digits.padStart(prec, '0');
  }
  let prefix = '';
  if (verb === 'O') prefix = '0o';
  else if (f.sharp && base === 8 && !digits.startsWith('0')) prefix = '0';
  else if (f.sharp && base === 16) prefix = verb === 'X' ? '0X' : '0x';
  else if (f.sharp && base === 2) prefix = '0b';
  const sign = neg ? '-' : f.plus ? '+' : f.space ? ' ' : '';
  pad(p, { ...f, zero: false }, sign + prefix + digits);
}

/** The decimal digits of |x|: `digits` without trailing zeros, the point after `dp` of them. */
interface Decimal {
  digits: string;
  dp: number;
}

function shortestDigits(x: number): Decimal {
  if (x === 0) return { digits: '', dp: 0 };
  const [mant, exp] = Math.abs(x).toExponential().split('e');
  return { digits: mant!.replace('.', '').replace(/0+$/, ''), dp: Number(exp) + 1 };
}

/** |x| exactly, rounded half to even to `n` significant digits (Go's strconv does so; JS's toFixed rounds half up). */
function roundedDigits(x: number, n: number): Decimal {
  if (x === 0) return { digits: '', dp: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  let mant = bits & ((1n << 52n) - 1n);
  let exp = biased - 1075;
  if (biased === 0) exp = -1074;
  else mant |= 1n << 52n;
  let all: string;
  let dp: number;
  if (exp >= 0) {
    all = (mant << BigInt(exp)).toString();
    dp = all.length;
  } else {
    all = (mant * 5n ** BigInt(-exp)).toString();
    dp = all.length + exp;
  }
  if (n < 0) return { digits: '', dp };
  if (all.length > n) {
    const head = all.slice(0, n);
    const rest = all.slice(n);
    const half =
      rest[0]! > '5' ||
      (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(head.at(-1) ?? '0') % 2 === 1));
    let rounded = head;
    if (half) {
      const up = (BigInt(head || '0') + 1n).toString();
      if (up.length > head.length) dp++;
      rounded = head ? up.slice(0, Math.max(head.length, 1)) : up;
    }
    all = rounded;
  }
  return { digits: all.replace(/0+$/, ''), dp };
}

function fmtE(d: Decimal, prec: number, e: string): string {
  let s = d.digits[0] ?? '0';
  if (prec > 0) s += `.${d.digits.slice(1, prec + 1).padEnd(prec, '0')}`;
  const exp = d.digits ? d.dp - 1 : 0;
  return `${s}${e}${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function fmtF(d: Decimal, prec: number): string {
  let s = d.dp > 0 ? d.digits.slice(0, d.dp).padEnd(d.dp, '0') : '0';
  if (prec > 0) {
    let frac = '';
    for (let i = 0; i < prec; i++) frac += d.digits[d.dp + i] ?? '0';
    if (d.dp < 0) frac = '0'.repeat(Math.min(-d.dp, prec)) + d.digits.slice(0, Math.max(prec + d.dp, 0));
    s += `.${frac.slice(0, prec).padEnd(prec, '0')}`;
  }
  return s;
}

/** strconv.FormatFloat for 'e', 'E', 'f', 'g', 'G' (prec -1: the shortest that reads back). */
export function formatFloat(x: number, fmt: 'e' | 'E' | 'f' | 'g' | 'G', prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const neg = x < 0 || Object.is(x, -0) ? '-' : '';
  const shortest = prec < 0;
  let d: Decimal;
  if (shortest) {
    d = shortestDigits(x);
    prec =
      fmt === 'e' || fmt === 'E'
        ? Math.max(d.digits.length - 1, 0)
        : fmt === 'f'
          ? Math.max(d.digits.length - d.dp, 0)
          : d.digits.length;
  } else if (fmt === 'e' || fmt === 'E') d = roundedDigits(x, prec + 1);
  else if (fmt === 'f') d = roundedDigits(x, roundedDigits(x, -1).dp + prec);
  else d = roundedDigits(x, prec === 0 ? (prec = 1) : prec);
  if (fmt === 'e' || fmt === 'E') return neg + fmtE(d, prec, fmt);
  if (fmt === 'f') return neg + fmtF(d, prec);
  let eprec = prec;
  if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
  if (shortest) eprec = 6;
  const exp = d.dp - 1;
  if (d.digits && (exp < -4 || exp >= eprec)) {
    return neg + fmtE(d, Math.min(prec, d.digits.length) - 1, fmt === 'g' ? 'e' : 'E');
  }
  if (!d.digits) return `${neg}0`;
  return neg + fmtF(d, Math.max((prec > d.dp ? d.digits.length : prec) - d.dp, 0));
}

/** The float's bits: x = mant × 2^(exp - 52), mant with its implicit leading bit. */
function floatBits(x: number): { mant: bigint; exp: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const frac = bits & ((1n << 52n) - 1n);
  return biased === 0 ? { mant: frac, exp: -1022 } : { mant: frac | (1n << 52n), exp: biased - 1023 };
}

/** strconv's 'b' (mantissa p exponent) and 'x' (hexadecimal mantissa and binary exponent) formats. */
function formatBinaryFloat(x: number, verb: 'b' | 'x' | 'X', prec: number): string {
  if (!Number.isFinite(x)) return formatFloat(x, 'g', -1);
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  let { mant, exp } = floatBits(x);
  if (verb === 'b') return `${sign}${mant}p${exp - 52 >= 0 ? '+' : ''}${exp - 52}`;
  if (mant === 0n) exp = 0;
  else {
    while (mant < 1n << 52n) {
      mant <<= 1n;
      exp--;
    }
  }
  let frac = mant & ((1n << 52n) - 1n);
  let digits: string;
  if (prec >= 0 && prec < 13) {
    const shift = BigInt(4 * (13 - prec));
    let q = frac >> shift;
    const r = frac & ((1n << shift) - 1n);
    const half = 1n << (shift - 1n);
    if (r > half || (r === half && ((mant >> shift) & 1n) === 1n)) q++;
    if (q >> BigInt(4 * prec) !== 0n) {
      q = 0n;
      if (mant !== 0n) exp++;
    }
    frac = q;
    digits = prec === 0 ? '' : q.toString(16).padStart(prec, '0');
  } else {
    digits = frac.toString(16).padStart(13, '0').replace(/0+$/, '');
    if (prec > 13) digits = digits.padEnd(prec, '0');
  }
  const lead = mant === 0n ? '0' : '1';
  const out = `${sign}0x${lead}${digits ? `.${digits}` : ''}p${exp >= 0 ? '+' : '-'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return verb === 'X' ? out.toUpperCase() : out;
}

function fmtFloat(p: Printer, f: Flags, x: number, verb: string): void {
  const fmt = ({ v: 'g', g: 'g', G: 'G', e: 'e', E: 'E', f: 'f', F: 'f' } as const)[verb as 'v'];
  const binary = verb === 'b' || verb === 'x' || verb === 'X';
  if (!fmt && !binary) return badVerb(p, f, verb, x, 0);
  const prec = f.prec ?? ('eEfF'.includes(verb) ? 6 : -1);
  let num = binary ? formatBinaryFloat(x, verb, prec) : formatFloat(x, fmt!, prec);
  if (f.sharp && !/[.eE]|Inf|NaN/.test(num)) num += '.';
  if (num === 'NaN' || num.endsWith('Inf')) {
    const sign = num.startsWith('-') ? '-' : f.plus ? '+' : f.space ? ' ' : '';
    return pad(p, { ...f, zero: false }, sign + num.replace(/^[+-]/, ''));
  }
  const neg = num.startsWith('-');
  const body = neg ? num.slice(1) : num;
  const sign = neg ? '-' : f.plus ? '+' : f.space ? ' ' : '';
  if (sign && f.zero && !f.minus && f.wid !== undefined && f.wid > body.length + 1) {
    return p.write(sign + body.padStart(f.wid - 1, '0'));
  }
  pad(p, f, sign + body);
}

/** strconv.CanBackquote: no backquote, no control character but tab, no byte order mark. */
function canBackquote(s: string): boolean {
  for (const c of s) {
    const r = c.codePointAt(0)!;
    if (c === '`' || r === 0xfeff || r === 0x7f || (r < 0x20 && r !== 9)) return false;
  }
  return true;
}

function fmtString(p: Printer, f: Flags, s: string, verb: string): void {
  if (f.prec !== undefined) s = [...s].slice(0, f.prec).join('');
  switch (verb) {
    case 'v':
      return pad(p, f, f.sharpV ? quoteGo(s) : s);
    case 's':
      return pad(p, f, s);
    case 'q':
      if (f.sharp && canBackquote(s)) return pad(p, f, `\`${s}\``);
      return pad(p, f, quoteGo(s, f.plus));
    case 'x':
    case 'X': {
      const bytes = [...utf8(s)].map((b) => b.toString(16).padStart(2, '0'));
      const hex = bytes.map((b) => (f.sharp ? `0x${b}` : b)).join(f.space ? ' ' : '');
      return pad(p, f, verb === 'X' ? hex.toUpperCase() : hex);
    }
  }
  badVerb(p, f, verb, s, 0);
}

function printValue(p: Printer, f: Flags, v: GoValue, verb: string, depth: number): void {
  p.tick();
  if (depth > 1000) throw new LimitError('a value is nested too deeply to print');
  if (v === undefined || v === null) {
    if (depth > 0) return pad(p, f, f.sharpV ? 'interface {}(nil)' : '<nil>');
    return verb === 'v' ? pad(p, f, '<nil>') : badVerb(p, f, verb, v, depth);
  }
  if (typeof v === 'boolean')
    return verb === 'v' || verb === 't' ? pad(p, f, String(v)) : badVerb(p, f, verb, v, depth);
  if (typeof v === 'number') return fmtFloat(p, f, v, verb);
  if (typeof v === 'string') return fmtString(p, f, v, verb);
  if (v instanceof GoInt) return fmtInteger(p, f, v, verb);
  if (v instanceof GoList) {
    if (f.sharpV) {
      p.write(`${goTypeName(v)}{`);
      v.items.forEach((item, i) => {
        if (i > 0) p.write(', ');
        printValue(p, f, item, verb, depth + 1);
      });
      return p.write('}');
    }
    p.write('[');
    v.items.forEach((item, i) => {
      if (i > 0) p.write(' ');
      printValue(p, f, item, verb, depth + 1);
    });
    return p.write(']');
  }
  p.write(f.sharpV ? `${goTypeName(v)}{` : 'map[');
  sortedKeys(v).forEach((key, i) => {
    if (i > 0) p.write(f.sharpV ? ', ' : ' ');
    printValue(p, f, key, verb, depth + 1);
    p.write(':');
    printValue(p, f, v.entries.get(key), verb, depth + 1);
  });
  p.write(f.sharpV ? '}' : ']');
}

function printArg(p: Printer, f: Flags, arg: GoValue, verb: string): void {
  if (verb === 'T') return pad(p, f, goTypeName(arg));
  if (verb === 'p') return badVerb(p, f, verb, arg, 0);
  printValue(p, f, arg, verb, 0);
}

/** fmt.Sprint. */
export function sprint(args: GoValue[], budget: Budget): string {
  const p = newPrinter(budget);
  let prevString = false;
  args.forEach((arg, i) => {
    const isString = typeof arg === 'string';
    if (i > 0 && !isString && !prevString) p.write(' ');
    printArg(p, noFlags(), arg, 'v');
    prevString = isString;
  });
  return p.out;
}

/** fmt.Sprintln. */
export function sprintln(args: GoValue[], budget: Budget): string {
  const p = newPrinter(budget);
  args.forEach((arg, i) => {
    if (i > 0) p.write(' ');
    printArg(p, noFlags(), arg, 'v');
  });
  p.write('\n');
  return p.out;
}

const newPrinter = (budget: Budget) => new Printer(budget);

/** fmt.Sprintf, verbs and flags as Go has them (no %p: an address is not repeatable). */
export function sprintf(format: string, args: GoValue[], budget: Budget): string {
  const p = newPrinter(budget);
  let argNum = 0;
  let reordered = false;
  const end = format.length;
  const argIndex = (i: number): { index: number; i: number; ok: boolean } | null => {
    if (format[i] !== '[') return null;
    reordered = true;
    const close = format.indexOf(']', i);
    if (close < 0) return { index: argNum, i: end, ok: false };
    const n = /^\d+$/.test(format.slice(i + 1, close)) ? Number(format.slice(i + 1, close)) - 1 : -1;
    return n >= 0 && n < args.length
      ? { index: n, i: close + 1, ok: true }
      : { index: argNum, i: close + 1, ok: false };
  };
  const parseNum = (i: number): { n?: number; i: number } => {
    let n = 0;
    let j = i;
    for (; j < end && format[j]! >= '0' && format[j]! <= '9'; j++) {
      if (n > 1e6) return { i: end };
      n = n * 10 + Number(format[j]);
    }
    return j === i ? { i } : { n, i: j };
  };
  for (let i = 0; i < end;) {
    const pct = format.indexOf('%', i);
    if (pct < 0) {
      p.write(format.slice(i));
      break;
    }
    p.write(format.slice(i, pct));
    i = pct + 1;
    const f = noFlags();
    let good = true;
    for (; i < end; i++) {
      const c = format[i];
      if (c === '#') f.sharp = true;
      else if (c === '0') f.zero = true;
      else if (c === '+') f.plus = true;
      else if (c === '-') f.minus = true;
      else if (c === ' ') f.space = true;
      else break;
    }
    let idx = argIndex(i);
    if (idx) {
      ({ i } = idx);
      if (idx.ok) argNum = idx.index;
      else good = false;
    }
    if (format[i] === '*') {
      i++;
      const a = args[argNum];
      if (a instanceof GoInt && a.value <= 1_000_000n && a.value >= -1_000_000n) {
        f.wid = Number(a.value);
        if (f.wid < 0) {
          f.minus = true;
          f.wid = -f.wid;
        }
      } else p.write('%!(BADWIDTH)');
      argNum++;
    } else {
      const w = parseNum(i);
      ({ i } = w);
      f.wid = w.n;
    }
    if (format[i] === '.') {
      i++;
      idx = argIndex(i);
      if (idx) {
        ({ i } = idx);
        if (idx.ok) argNum = idx.index;
        else good = false;
      }
      if (format[i] === '*') {
        i++;
        const a = args[argNum];
        if (a instanceof GoInt && a.value >= 0n && a.value <= 1_000_000n) f.prec = Number(a.value);
        else p.write('%!(BADPREC)');
        argNum++;
      } else f.prec = parseNum(i).n ?? 0;
      if (format[i] !== '*') i = parseNum(i).i;
    }
    idx = argIndex(i);
    if (idx) {
      ({ i } = idx);
      if (idx.ok) argNum = idx.index;
      else good = false;
    }
    if (i >= end) {
      p.write('%!(NOVERB)');
      break;
    }
    if ((f.wid ?? 0) > budget.maxBytes || (f.prec ?? 0) > budget.maxBytes) {
      throw new LimitError(`printf width or precision exceeds ${budget.maxBytes}`);
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (f.minus) f.zero = false;
    if (verb === '%') {
      p.write('%');
      continue;
    }
    if (!good) {
      p.write(`%!${verb}(BADINDEX)`);
      continue;
    }
    if (argNum >= args.length) {
      p.write(`%!${verb}(MISSING)`);
      continue;
    }
    if (verb === 'v' && f.sharp) {
      f.sharp = false;
      f.sharpV = true;
    }
    if (verb === 'w') {
      badVerb(p, f, verb, args[argNum++], 0);
      continue;
    }
    printArg(p, f, args[argNum++], verb);
  }
  if (!reordered && argNum < args.length) {
    p.write('%!(EXTRA ');
    args.slice(argNum).forEach((arg, i) => {
      if (i > 0) p.write(', ');
      if (arg === undefined || arg === null) p.write('<nil>');
      else {
        p.write(`${goTypeName(arg)}=`);
        printArg(p, noFlags(), arg, 'v');
      }
    });
    p.write(')');
  }
  return p.out;
}

// ---- JSON (encoding/json) ----

function jsonString(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (
      c < 0x20 ||
      (escapeHTML && (ch === '<' || ch === '>' || ch === '&')) ||
      c === 0x2028 ||
      c === 0x2029
    ) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (c >= 0xd800 && c < 0xe000) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

function jsonFloat(x: number): string {
  if (!Number.isFinite(x)) throw new FuncError(`json: unsupported value: ${formatFloat(x, 'g', -1)}`);
  if (Object.is(x, -0)) return '-0';
  return String(x);
}

/** json.Marshal, or json.MarshalIndent(v, "", indent) when `indent` is given. */
export function toJSON(
  v: GoValue,
  budget: Budget,
  options: { indent?: string; escapeHTML: boolean },
): string {
  const p = newPrinter(budget);
  const nl = (depth: number) => (options.indent === undefined ? '' : `\n${options.indent.repeat(depth)}`);
  const write = (v: GoValue, depth: number): void => {
    p.tick();
    if (depth > 1000)
      throw new FuncError(`json: unsupported value: encountered a cycle via ${goTypeName(v)}`);
    if (v === undefined || v === null) return p.write('null');
    if (typeof v === 'boolean') return p.write(String(v));
    if (typeof v === 'number') return p.write(jsonFloat(v));
    if (typeof v === 'string') return p.write(jsonString(v, options.escapeHTML));
    if (v instanceof GoInt) return p.write(v.value.toString());
    if (v instanceof GoList) {
      if (v.isNil) return p.write('null');
      if (v.items.length === 0) return p.write('[]');
      p.write('[');
      v.items.forEach((item, i) => {
        p.write((i > 0 ? ',' : '') + nl(depth + 1));
        write(item, depth + 1);
      });
      return p.write(`${nl(depth)}]`);
    }
    if (v.isNil) return p.write('null');
    if (v.entries.size === 0) return p.write('{}');
    p.write('{');
    sortedKeys(v).forEach((key, i) => {
      p.write(
        `${i > 0 ? ',' : ''}${nl(depth + 1)}${jsonString(key, options.escapeHTML)}:${options.indent === undefined ? '' : ' '}`,
      );
      write(v.entries.get(key), depth + 1);
    });
    p.write(`${nl(depth)}}`);
  };
  write(v, 0);
  return p.out;
}

/** json.Unmarshal into interface{}, or what is wrong with the text. */
function fromJSONText(text: string): GoValue | { error: string } {
  try {
    return fromJSON(JSON.parse(text) as unknown);
  } catch (error) {
    if (error instanceof LimitError) return { error: error.message };
    const first = text.trimStart()[0];
    if (first === undefined) return { error: 'unexpected end of JSON input' };
    if (!/[[{"tfn\-0-9]/.test(first))
      return { error: `invalid character '${first}' looking for beginning of value` };
    return { error: `invalid JSON: ${(error as Error).message}` };
  }
}

// ---- conversions (spf13/cast, as sprig uses it) ----

/** Go's int64(float64): truncation; out of range (and NaN) gives the minimum on amd64. */
function floatToInt64(x: number): bigint {
  if (!Number.isFinite(x) || x >= 2 ** 63 || x < -(2 ** 63)) return -(2n ** 63n);
  return BigInt(Math.trunc(x));
}

function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') return foundZero ? s.slice(0, i - 1) : s;
    if (c === '0') foundZero = true;
    else return s;
  }
  return s;
}

/** cast.ToInt64 (errors give 0, as sprig ignores them). */
export function toInt64(v: GoValue): bigint {
  if (v instanceof GoInt) return v.value;
  if (typeof v === 'number') return floatToInt64(v);
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'string') {
    const n = parseGoInteger(trimZeroDecimal(v));
    return n !== null && n >= -(2n ** 63n) && n < 2n ** 63n ? n : 0n;
  }
  return 0n;
}

/** cast.ToFloat64. */
function toFloat64(v: GoValue): number {
  if (v instanceof GoInt) return Number(v.value);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const m = /^([+-]?)(inf|infinity|nan)$/i.exec(v);
    if (m) return m[2]!.toLowerCase() === 'nan' ? NaN : m[1] === '-' ? -Infinity : Infinity;
    return parseGoFloat(v) ?? 0;
  }
  return 0;
}

/** sprig's strval: strings as they are, anything else as %v prints it. */
function strval(v: GoValue, budget: Budget): string {
  return typeof v === 'string' ? v : sprintf('%v', [v], budget);
}

/** sprig's strslice (toStrings, join): nil elements are dropped. */
function strslice(v: GoValue, budget: Budget): string[] {
  if (v instanceof GoList)
    return v.items.filter((x) => x !== null && x !== undefined).map((x) => strval(x, budget));
  if (v === null || v === undefined) return [];
  return [strval(v, budget)];
}

/** reflect.DeepEqual over template values. */
function deepEqual(a: GoValue, b: GoValue, budget: Budget, depth = 0): boolean {
  budget.charge(1 / 16);
  if (depth > 1000) throw new LimitError('values are nested too deeply to compare');
  if (a === undefined || a === null || b === undefined || b === null) {
    return (a === undefined || a === null) && (b === undefined || b === null);
  }
  if (goTypeName(a) !== goTypeName(b)) return false;
  if (a instanceof GoInt) return a.value === (b as GoInt).value;
  if (a instanceof GoList) {
    const l = b as GoList;
    return (
      a.items.length === l.items.length &&
      a.items.every((x, i) => deepEqual(x, l.items[i], budget, depth + 1))
    );
  }
  if (a instanceof GoMap) {
    const m = b as GoMap;
    if (a.entries.size !== m.entries.size) return false;
    for (const [k, x] of a.entries) {
      if (!m.entries.has(k) || !deepEqual(x, m.entries.get(k), budget, depth + 1)) return false;
    }
    return true;
  }
  return a === b;
}

// ---- Go's strings package ----

const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const TRIM_SPACE = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'gu');

function mapRunes(s: string, fn: (c: string) => string): string {
  let out = '';
  for (const c of s) {
    const m = fn(c);
    out += [...m].length === 1 ? m : c;
  }
  return out;
}

function goTitle(s: string): string {
  let prev = ' ';
  return mapRunes(s, (c) => {
    const sep = /^[0-9A-Za-z_]$/.test(prev)
      ? false
      : prev.codePointAt(0)! <= 0x7f || !/^[\p{L}\p{Nd}]$/u.test(prev)
        ? prev.codePointAt(0)! <= 0x7f || new RegExp(`^[${GO_SPACE}]$`, 'u').test(prev)
        : false;
    prev = c;
    return sep ? c.toUpperCase() : c;
  });
}

function goTrim(s: string, cutset: string): string {
  const cut = new Set(cutset);
  const runes = [...s];
  let a = 0;
  let b = runes.length;
  while (a < b && cut.has(runes[a]!)) a++;
  while (b > a && cut.has(runes[b - 1]!)) b--;
  return runes.slice(a, b).join('');
}

function goSplit(s: string, sep: string): string[] {
  return sep === '' ? [...s] : s.split(sep);
}

function goReplace(s: string, old: string, repl: string, budget: Budget): string {
  const parts = old === '' ? ['', ...[...s], ''] : s.split(old);
  const size = byteLength(s) + (parts.length - 1) * byteLength(repl);
  if (size > budget.maxBytes)
    throw new LimitError(`replace would make ${size} bytes, more than ${budget.maxBytes}`);
  return old === '' ? parts.join(repl) : parts.join(repl);
}

function repeatBounded(s: string, count: number, budget: Budget): string {
  const size = byteLength(s) * count;
  if (size > budget.maxBytes)
    throw new LimitError(`repeat would make ${size} bytes, more than ${budget.maxBytes}`);
  budget.charge(size / 1024);
  return s.repeat(count);
}

/** Go's base64.StdEncoding.DecodeString, including its error text (which sprig's b64dec returns as the result). */
function base64Decode(s: string, alphabet: string, quantum: 4 | 8): string {
  const bytes: number[] = [];
  let bits = 0;
  let n = 0;
  const groupBits = quantum === 4 ? 6 : 5;
  const chars = [...s].map((c) => c.codePointAt(0)!);
  const significant: number[] = [];
  chars.forEach((c, i) => {
    if (c !== 10 && c !== 13) significant.push(i);
  });
  const err = (at: number) => `illegal base${quantum === 4 ? 64 : 32} data at input byte ${at}`;
  let padAt = -1;
  for (let k = 0; k < significant.length; k++) {
    const i = significant[k]!;
    const ch = String.fromCodePoint(chars[i]!);
    if (ch === '=') {
      const pos = k % quantum;
      if (pos < 2 || padAt >= 0) {
        if (padAt < 0) return err(i);
        continue;
      }
      padAt = k;
      const need = quantum - pos;
      for (let j = 0; j < need; j++) {
        if (String.fromCodePoint(chars[significant[k + j] ?? -1] ?? 0) !== '=')
          return err(significant[k + j] ?? chars.length);
      }
      if (k + need < significant.length) return err(significant[k + need]!);
      break;
    }
    const v = alphabet.indexOf(ch);
    if (v < 0) return err(i);
    bits = (bits << groupBits) | v;
    n += groupBits;
    if (n >= 8) {
      n -= 8;
      bytes.push((bits >> n) & 0xff);
      bits &= (1 << n) - 1;
    }
  }
  if (padAt < 0 && significant.length % quantum !== 0) {
    return err(significant[significant.length - (significant.length % quantum)]!);
  }
  return Buffer.from(bytes).toString('utf8');
}

function base32Encode(s: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let n = 0;
  for (const b of utf8(s)) {
    bits = (bits << 8) | b;
    n += 8;
    while (n >= 5) {
      n -= 5;
      out += alphabet[(bits >> n) & 31];
    }
    bits &= (1 << n) - 1;
  }
  if (n > 0) out += alphabet[(bits << (5 - n)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}

// ---- Go's regexp (RE2 syntax, linear time) ----

type CharTest = (cp: number) => boolean;
type Re =
  | { t: 'char'; test: CharTest }
  | { t: 'cat' | 'alt'; subs: Re[] }
  | { t: 'rep'; sub: Re; min: number; max: number; greedy: boolean }
  | { t: 'cap'; sub: Re; index: number }
  | { t: 'assert'; kind: 'bol' | 'eol' | 'bot' | 'eot' | 'wordb' | 'nwordb' };
type Inst =
  | { op: 'char'; test: CharTest }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'save'; n: number }
  | { op: 'assert'; kind: 'bol' | 'eol' | 'bot' | 'eot' | 'wordb' | 'nwordb' }
  | { op: 'match' };

class RegexpError extends Error {}

const range =
  (lo: number, hi: number): CharTest =>
  (c) =>
    c >= lo && c <= hi;
const anyOf =
  (...tests: CharTest[]): CharTest =>
  (c) =>
    tests.some((t) => t(c));
const not =
  (t: CharTest): CharTest =>
  (c) =>
    !t(c);
const PERL: Record<string, CharTest> = {
  d: range(0x30, 0x39),
  s: (c) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32,
  w: (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f,
};
const POSIX: Record<string, CharTest> = {
  alnum: anyOf(range(48, 57), range(65, 90), range(97, 122)),
  alpha: anyOf(range(65, 90), range(97, 122)),
  ascii: range(0, 127),
  blank: (c) => c === 9 || c === 32,
  cntrl: anyOf(range(0, 31), range(127, 127)),
  digit: range(48, 57),
  graph: range(33, 126),
  lower: range(97, 122),
  print: range(32, 126),
  punct: anyOf(range(33, 47), range(58, 64), range(91, 96), range(123, 126)),
  space: anyOf(range(9, 13), range(32, 32)),
  upper: range(65, 90),
  word: PERL.w!,
  xdigit: anyOf(range(48, 57), range(65, 70), range(97, 102)),
};

function unicodeClass(name: string): CharTest {
  for (const source of [`\\p{${name}}`, `\\p{Script=${name}}`]) {
    try {
      const re = new RegExp(`^${source}$`, 'u');
      return (c) => re.test(String.fromCodePoint(c));
    } catch {
      // not this kind of property
    }
  }
  if (name === 'Any') return () => true;
  throw new RegexpError(`invalid character class range: \`\\p{${name}}\``);
}

const foldCase =
  (test: CharTest): CharTest =>
  (c) => {
    if (test(c)) return true;
    const s = String.fromCodePoint(c);
    const lower = s.toLowerCase();
    const upper = s.toUpperCase();
    return (
      ([...lower].length === 1 && test(lower.codePointAt(0)!)) ||
      ([...upper].length === 1 && test(upper.codePointAt(0)!))
    );
  };

interface ReFlags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

/** Parses RE2 syntax as Go's regexp/syntax (Perl flags), with its error wording. */
class RegexpParser {
  private i = 0;
  ncap = 0;
  names: string[] = [''];
  private depth = 0;
  constructor(private src: string) {}

  parse(): Re {
    const re = this.alt({ i: false, m: false, s: false, U: false });
    if (this.i < this.src.length) throw new RegexpError(`unexpected ): \`${this.src}\``);
    return re;
  }
  private peek(): string | undefined {
    return this.src[this.i];
  }
  private alt(flags: ReFlags): Re {
    const subs = [this.cat(flags)];
    while (this.peek() === '|') {
      this.i++;
      subs.push(this.cat(flags));
    }
    return subs.length === 1 ? subs[0]! : { t: 'alt', subs };
  }
  private cat(flags: ReFlags): Re {
    const subs: Re[] = [];
    let lastWasRep = false;
    let repStart = 0;
    while (this.i < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      const c = this.peek()!;
      if (
        c === '*' ||
        c === '+' ||
        c === '?' ||
        (c === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.i)))
      ) {
        const start = this.i;
        let min: number;
        let max: number;
        if (c === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))!;
          min = Number(m[1]);
          max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
          this.i += m[0].length;
          if (min > 1000 || max > 1000 || (max >= 0 && min > max)) {
            throw new RegexpError(`invalid repeat count: \`${m[0]}\``);
          }
        } else {
          this.i++;
          [min, max] = c === '*' ? [0, -1] : c === '+' ? [1, -1] : [0, 1];
        }
        let greedy = true;
        if (this.peek() === '?') {
          this.i++;
          greedy = false;
        }
        if (flags.U) greedy = !greedy;
        const op = this.src.slice(start, this.i);
        if (subs.length === 0) throw new RegexpError(`missing argument to repetition operator: \`${op}\``);
        if (lastWasRep) {
          throw new RegexpError(
            `invalid nested repetition operator: \`${this.src.slice(repStart, this.i)}\``,
          );
        }
        subs.push({ t: 'rep', sub: subs.pop()!, min, max, greedy });
        lastWasRep = true;
        repStart = start;
        continue;
      }
      lastWasRep = false;
      const atom = this.atom(flags);
      if (atom) subs.push(atom);
    }
    return subs.length === 1 ? subs[0]! : { t: 'cat', subs };
  }
  private atom(flags: ReFlags): Re | null {
    const c = this.src[this.i++]!;
    const lit = (test: CharTest): Re => ({ t: 'char', test: flags.i ? foldCase(test) : test });
    switch (c) {
      case '(': {
        if (++this.depth > 1000) throw new RegexpError('expression nests too deeply');
        const rest = this.src.slice(this.i);
        let index: number | null = null;
        let inner = flags;
        if (rest.startsWith('?')) {
          const named = /^\?P?<([A-Za-z0-9_]+)>/.exec(rest);
          const flagGroup = /^\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest);
          if (named) {
            this.i += named[0].length;
            index = ++this.ncap;
            this.names[index] = named[1]!;
          } else if (flagGroup && (flagGroup[1] || flagGroup[2] !== undefined || flagGroup[3] === ':')) {
            if (flagGroup[2] === '') throw new RegexpError(`missing flags: \`(${flagGroup[0]}\``);
            const next = { ...flags };
            for (const f of flagGroup[1]!) next[f as keyof ReFlags] = true;
            for (const f of flagGroup[2] ?? '') next[f as keyof ReFlags] = false;
            this.i += flagGroup[0].length;
            this.depth--;
            if (flagGroup[3] === ')') {
              Object.assign(flags, next);
              return null;
            }
            inner = next;
          } else throw new RegexpError(`invalid or unsupported Perl syntax: \`(${rest.slice(0, 2)}\``);
        } else index = ++this.ncap;
        const sub = this.alt({ ...inner });
        if (this.src[this.i++] !== ')') throw new RegexpError(`missing closing ): \`${this.src}\``);
        this.depth--;
        return index === null ? sub : { t: 'cap', sub, index };
      }
      case ')':
        throw new RegexpError(`unexpected ): \`${this.src}\``);
      case '.':
        return { t: 'char', test: flags.s ? () => true : (x) => x !== 10 };
      case '^':
        return { t: 'assert', kind: flags.m ? 'bol' : 'bot' };
      case '$':
        return { t: 'assert', kind: flags.m ? 'eol' : 'eot' };
      case '[':
        return lit(this.charClass());
      case '\\':
        return this.escape(flags, lit);
    }
    const cp = this.src.codePointAt(this.i - 1)!;
    if (cp > 0xffff) this.i++;
    return lit((x) => x === cp);
  }
  private escape(flags: ReFlags, lit: (t: CharTest) => Re): Re {
    const c = this.src[this.i];
    if (c === undefined) throw new RegexpError('trailing backslash at end of expression: ``');
    switch (c) {
      case 'A':
        this.i++;
        return { t: 'assert', kind: 'bot' };
      case 'z':
        this.i++;
        return { t: 'assert', kind: 'eot' };
      case 'b':
        this.i++;
        return { t: 'assert', kind: 'wordb' };
      case 'B':
        this.i++;
        return { t: 'assert', kind: 'nwordb' };
      case 'Q': {
        const end = this.src.indexOf('\\E', this.i + 1);
        const text = this.src.slice(this.i + 1, end < 0 ? undefined : end);
        this.i = end < 0 ? this.src.length : end + 2;
        return { t: 'cat', subs: [...text].map((ch) => lit((x) => x === ch.codePointAt(0))) };
      }
    }
    return lit(this.classEscape());
  }
  /** An escape that stands for characters, in or out of a class. */
  private classEscape(): CharTest {
    const c = this.src[this.i++]!;
    const lower = c.toLowerCase();
    if (lower in PERL && 'dswDSW'.includes(c)) return c === lower ? PERL[lower]! : not(PERL[lower]!);
    if (c === 'p' || c === 'P') {
      let name: string;
      if (this.src[this.i] === '{') {
        const end = this.src.indexOf('}', this.i);
        if (end < 0)
          throw new RegexpError(`invalid character class range: \`\\${c}${this.src.slice(this.i)}\``);
        name = this.src.slice(this.i + 1, end);
        this.i = end + 1;
      } else name = this.src[this.i++] ?? '';
      const negated = name.startsWith('^');
      const test = unicodeClass(negated ? name.slice(1) : name);
      return (c === 'P') !== negated ? not(test) : test;
    }
    const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };
    if (c in simple) return (x) => x === simple[c];
    if (c === 'x') {
      const m = /^\{([0-9a-fA-F]{1,8})\}|^([0-9a-fA-F]{2})/.exec(this.src.slice(this.i));
      if (!m) throw new RegexpError(`invalid escape sequence: \`\\x${this.src.slice(this.i, this.i + 2)}\``);
      this.i += m[0].length;
      const v = parseInt(m[1] ?? m[2]!, 16);
      return (x) => x === v;
    }
    if (c >= '0' && c <= '7') {
      const m = /^[0-7]{1,3}/.exec(this.src.slice(this.i - 1))!;
      if (c !== '0' && m[0].length === 1) throw new RegexpError(`invalid escape sequence: \`\\${c}\``);
      this.i += m[0].length - 1;
      const v = parseInt(m[0], 8);
      return (x) => x === v;
    }
    if (/[!-/:-@[-`{-~]/.test(c)) return (x) => x === c.charCodeAt(0);
    throw new RegexpError(`invalid escape sequence: \`\\${c}\``);
  }
  private charClass(): CharTest {
    const start = this.i - 1;
    const negated = this.src[this.i] === '^';
    if (negated) this.i++;
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      if (this.i >= this.src.length) throw new RegexpError(`missing closing ]: \`${this.src.slice(start)}\``);
      const c = this.src[this.i]!;
      if (c === ']' && !first) {
        this.i++;
        break;
      }
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.src.slice(this.i));
      if (posix) {
        const test = POSIX[posix[2]!];
        if (!test) throw new RegexpError(`invalid character class range: \`${posix[0]}\``);
        tests.push(posix[1] ? not(test) : test);
        this.i += posix[0].length;
        continue;
      }
      const rangeStart = this.i;
      const lo = this.classChar();
      if (typeof lo === 'function') {
        tests.push(lo);
        continue;
      }
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++;
        const hi = this.classChar();
        if (typeof hi === 'function' || hi < lo) {
          throw new RegexpError(`invalid character class range: \`${this.src.slice(rangeStart, this.i)}\``);
        }
        tests.push(range(lo, hi));
      } else tests.push((x) => x === lo);
    }
    const test = anyOf(...tests);
    return negated ? not(test) : test;
  }
  private classChar(): number | CharTest {
    if (this.src[this.i] === '\\') {
      this.i++;
      const t = this.classEscape();
      const single = [...Array(0x80).keys()].filter(t);
      return single.length === 1 && !'dswDSWpP'.includes(this.src[this.i - 1]!) ? single[0]! : t;
    }
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }
}

const MAX_PROGRAM = 20_000;

function compileRe(re: Re, prog: Inst[]): void {
  if (prog.length > MAX_PROGRAM) throw new RegexpError('expression too large');
  switch (re.t) {
    case 'char':
      prog.push({ op: 'char', test: re.test });
      return;
    case 'assert':
      prog.push({ op: 'assert', kind: re.kind });
      return;
    case 'cap':
      prog.push({ op: 'save', n: 2 * re.index });
      compileRe(re.sub, prog);
      prog.push({ op: 'save', n: 2 * re.index + 1 });
      return;
    case 'cat':
      re.subs.forEach((s) => compileRe(s, prog));
      return;
    case 'alt': {
      const jumps: Inst[] = [];
      re.subs.forEach((sub, k) => {
        if (k < re.subs.length - 1) {
          const split = { op: 'split' as const, x: prog.length + 1, y: 0 };
          prog.push(split);
          compileRe(sub, prog);
          const jmp = { op: 'jmp' as const, x: 0 };
          prog.push(jmp);
          jumps.push(jmp);
          split.y = prog.length;
        } else compileRe(sub, prog);
      });
      for (const j of jumps) (j as { x: number }).x = prog.length;
      return;
    }
    case 'rep': {
      for (let k = 0; k < re.min; k++) compileRe(re.sub, prog);
      if (re.max < 0) {
        const split = { op: 'split' as const, x: 0, y: 0 };
        const loop = prog.length;
        prog.push(split);
        compileRe(re.sub, prog);
        prog.push({ op: 'jmp', x: loop });
        [split.x, split.y] = re.greedy ? [loop + 1, prog.length] : [prog.length, loop + 1];
        return;
      }
      const splits: { op: 'split'; x: number; y: number }[] = [];
      for (let k = re.min; k < re.max; k++) {
        const split = { op: 'split' as const, x: 0, y: 0 };
        splits.push(split);
        prog.push(split);
        const body = prog.length;
        compileRe(re.sub, prog);
        split.x = body;
      }
      for (const s of splits) {
        if (!re.greedy) [s.x, s.y] = [prog.length, s.x];
        else s.y = prog.length;
      }
    }
  }
}

const isWordAt = (s: string, i: number) => i >= 0 && i < s.length && PERL.w!(s.charCodeAt(i));

/** A compiled Go regular expression, run by a Pike VM: time linear in the input, whatever the pattern. */
export class GoRegexp {
  private prog: Inst[] = [];
  readonly ncap: number;
  readonly names: string[];

  constructor(readonly source: string) {
    const parser = new RegexpParser(source);
    let re: Re;
    try {
      re = parser.parse();
    } catch (error) {
      if (error instanceof RegexpError) throw new FuncError(`error parsing regexp: ${error.message}`);
      throw error;
    }
    this.ncap = parser.ncap + 1;
    this.names = parser.names;
    this.prog.push({ op: 'save', n: 0 });
    try {
      compileRe(re, this.prog);
    } catch (error) {
      if (error instanceof RegexpError)
        throw new FuncError(`error parsing regexp: ${error.message}: \`${source}\``);
      throw error;
    }
    this.prog.push({ op: 'save', n: 1 }, { op: 'match' });
  }

  /** The leftmost-first match at or after `start`: capture positions (UTF-16 offsets, -1 unset), or null. */
  exec(s: string, start: number, budget: Budget): number[] | null {
    const prog = this.prog;
    const size = this.ncap * 2;
    let clist: { pc: number; caps: number[] }[] = [];
    let matched: number[] | null = null;
    const seen = new Int32Array(prog.length).fill(-1);
    let generation = 0;
    let work = 0;
    const add = (list: typeof clist, pc0: number, caps0: number[], at: number) => {
      const stack: [number, number[]][] = [[pc0, caps0]];
      while (stack.length) {
        const [pc, caps] = stack.pop()!;
        if (seen[pc] === generation) continue;
        seen[pc] = generation;
        work++;
        const inst = prog[pc]!;
        switch (inst.op) {
          case 'jmp':
            stack.push([inst.x, caps]);
            break;
          case 'split':
            stack.push([inst.y, caps], [inst.x, caps]);
            break;
          case 'save': {
            const copy = caps.slice();
            copy[inst.n] = at;
            stack.push([pc + 1, copy]);
            break;
          }
          case 'assert': {
            const ok = {
              bot: at === 0,
              eot: at === s.length,
              bol: at === 0 || s[at - 1] === '\n',
              eol: at === s.length || s[at] === '\n',
              wordb: isWordAt(s, at - 1) !== isWordAt(s, at),
              nwordb: isWordAt(s, at - 1) === isWordAt(s, at),
            }[inst.kind];
            if (ok) stack.push([pc + 1, caps]);
            break;
          }
          default:
            list.push({ pc, caps });
        }
      }
    };
    for (let at = start; ;) {
      generation++;
      if (matched === null) add(clist, 0, new Array<number>(size).fill(-1), at);
      if (clist.length === 0 && matched !== null) break;
      const cp = at < s.length ? s.codePointAt(at)! : -1;
      const next = at + (cp > 0xffff ? 2 : 1);
      const nlist: typeof clist = [];
      generation++;
      for (const thread of clist) {
        const inst = prog[thread.pc]!;
        work++;
        if (inst.op === 'match') {
          matched = thread.caps;
          break;
        }
        if (inst.op === 'char' && cp >= 0 && inst.test(cp)) add(nlist, thread.pc + 1, thread.caps, next);
      }
      if (work > 4096) {
        budget.charge(work / 1024);
        work = 0;
      }
      clist = nlist;
      if (cp < 0) break;
      at = next;
    }
    budget.charge(work / 1024);
    return matched;
  }

  /** Every match, as Go's allMatches walks them (an empty match right after a match is skipped). */
  all(s: string, n: number, budget: Budget): number[][] {
    const out: number[][] = [];
    if (n < 0) n = s.length + 1;
    for (let pos = 0, prevEnd = -1; out.length < n && pos <= s.length;) {
      const m = this.exec(s, pos, budget);
      if (!m) break;
      let accept = true;
      if (m[1] === pos) {
        if (m[0] === prevEnd) accept = false;
        pos += pos < s.length ? (s.codePointAt(pos)! > 0xffff ? 2 : 1) : 1;
      } else pos = m[1]!;
      prevEnd = m[1]!;
      if (accept) out.push(m);
    }
    return out;
  }

  /** Regexp.ReplaceAllString (expanding $1, ${name}) or ReplaceAllLiteralString. */
  replaceAll(src: string, repl: string, literal: boolean, budget: Budget): string {
    let out = '';
    let lastEnd = 0;
    for (let search = 0; search <= src.length;) {
      const m = this.exec(src, search, budget);
      if (!m) break;
      out += src.slice(lastEnd, m[0]);
      if (m[1]! > lastEnd || m[0] === 0) out += literal ? repl : this.expand(repl, src, m);
      if (out.length > budget.maxBytes)
        throw new LimitError(`regexReplaceAll would exceed ${budget.maxBytes} bytes`);
      lastEnd = m[1]!;
      const width = search < src.length ? (src.codePointAt(search)! > 0xffff ? 2 : 1) : 1;
      search = search + width > m[1]! ? search + width : m[1]!;
    }
    return out + src.slice(lastEnd);
  }

  private expand(template: string, src: string, m: number[]): string {
    let out = '';
    for (;;) {
      const dollar = template.indexOf('$');
      if (dollar < 0) break;
      out += template.slice(0, dollar);
      template = template.slice(dollar + 1);
      if (template.startsWith('$')) {
        out += '$';
        template = template.slice(1);
        continue;
      }
      const ref = /^(?:\{([\p{L}\p{Nd}_]+)\}|([\p{L}\p{Nd}_]+))/u.exec(template);
      if (!ref) {
        out += '$';
        continue;
      }
      template = template.slice(ref[0].length);
      const name = ref[1] ?? ref[2]!;
      let num =
        /^\d+$/.test(name) && !(name.length > 1 && name[0] === '0') && name.length < 9 ? Number(name) : -1;
      if (num < 0) num = this.names.indexOf(name);
      if (num > 0 || (num === 0 && /^\d+$/.test(name))) {
        if (2 * num + 1 < m.length && m[2 * num]! >= 0) out += src.slice(m[2 * num], m[2 * num + 1]);
      }
    }
    return out + template;
  }

  split(s: string, n: number, budget: Budget): string[] {
    if (n === 0) return [];
    if (this.source.length > 0 && s.length === 0) return [''];
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const m of this.all(s, n, budget)) {
      if (n > 0 && out.length === n - 1) break;
      end = m[0]!;
      if (m[1] !== 0) out.push(s.slice(beg, end));
      beg = m[1]!;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
  }
}

const regexpCache = new Map<string, GoRegexp>();

function compileRegexp(source: string, must: boolean): GoRegexp {
  let re = regexpCache.get(source);
  if (!re) {
    try {
      re = new GoRegexp(source);
    } catch (error) {
      // regexp.MustCompile panics with the pattern quoted; the must* variants return the plain error.
      const quoted = canBackquote(source) ? `\`${source}\`` : quoteGo(source);
      if (must && error instanceof FuncError)
        throw new FuncError(`regexp: Compile(${quoted}): ${error.message}`);
      throw error;
    }
    if (regexpCache.size > 256) regexpCache.clear();
    regexpCache.set(source, re);
  }
  return re;
}

// ---- Masterminds/semver v3.3.0 (sprig's semverCompare) ----

interface SemVersion {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
}

const SEMVER = String.raw`v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
const CV = String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
const OPS = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
const semverRegexps = () => ({
  version: compileRegexp(`^${SEMVER}$`, true),
  constraint: compileRegexp(String.raw`^\s*(${OPS})\s*(${CV})\s*$`, true),
  range: compileRegexp(String.raw`\s*(${CV})\s+-\s+(${CV})\s*`, true),
  find: compileRegexp(String.raw`(${OPS})\s*(${CV})`, true),
  valid: compileRegexp(String.raw`^(\s*(${OPS})\s*(${CV})\s*)((?:\s+|,\s*)(${OPS})\s*(${CV})\s*)*$`, true),
});

const group = (s: string, m: number[], k: number) => (m[2 * k]! >= 0 ? s.slice(m[2 * k], m[2 * k + 1]) : '');

function parseSemver(v: string, budget: Budget): SemVersion {
  const m = semverRegexps().version.exec(v, 0, budget);
  if (!m) throw new FuncError('Invalid Semantic Version');
  const seg = (k: number) => {
    const text = group(v, m, k).replace(/^\./, '');
    const n = text ? BigInt(text) : 0n;
    if (n >= 2n ** 64n) {
      throw new FuncError(
        `Error parsing version segment: strconv.ParseUint: parsing ${quoteGo(text)}: value out of range`,
      );
    }
    return n;
  };
  const pre = group(v, m, 5);
  const meta = group(v, m, 8);
  for (const part of pre ? pre.split('.') : []) {
    if (/^[0-9]*$/.test(part) && part.length > 1 && part[0] === '0')
      throw new FuncError('Version segment starts with 0');
    if (!/^[0-9A-Za-z-]*$/.test(part)) throw new FuncError('Invalid Prerelease string');
  }
  for (const part of meta ? meta.split('.') : []) {
    if (!/^[0-9A-Za-z-]*$/.test(part)) throw new FuncError('Invalid Metadata string');
  }
  return { major: seg(1), minor: seg(2), patch: seg(3), pre };
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return 1;
  const sn = /^\d+$/.test(s) && BigInt(s) < 2n ** 64n;
  const on = /^\d+$/.test(o) && BigInt(o) < 2n ** 64n;
  if (!sn && !on) return compareGoStrings(s, o) > 0 ? 1 : -1;
  if (!on) return -1;
  if (!sn) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

function compareSemver(v: SemVersion, o: SemVersion): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (v[k] !== o[k]) return v[k] < o[k] ? -1 : 1;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  const a = v.pre.split('.');
  const b = o.pre.split('.');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = comparePrePart(a[i] ?? '', b[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

interface SemConstraint {
  op: string;
  con: SemVersion;
  dirty: boolean;
  minorDirty: boolean;
  patchDirty: boolean;
}

function checkConstraint(v: SemVersion, c: SemConstraint): boolean {
  const { con } = c;
  if (v.pre !== '' && con.pre === '' && c.op !== '!=') return false;
  const cmp = compareSemver(v, con);
  const tilde = () => {
    if (cmp < 0) return false;
    if (con.major === 0n && con.minor === 0n && con.patch === 0n && !c.minorDirty && !c.patchDirty)
      return true;
    if (v.major !== con.major) return false;
    return v.minor === con.minor || c.minorDirty;
  };
  switch (c.op) {
    case '':
    case '=':
      return c.dirty ? tilde() : cmp === 0;
    case '!=':
      if (c.dirty) {
        if (v.pre !== '' && con.pre === '') return false;
        if (con.major !== v.major) return true;
        if (con.minor !== v.minor && !c.minorDirty) return true;
        if (c.minorDirty) return false;
        if (con.patch !== v.patch && !c.patchDirty) return true;
        if (c.patchDirty) return (v.pre !== '' || con.pre !== '') && comparePrePart(v.pre, con.pre) !== 0;
      }
      return cmp !== 0;
    case '>':
      if (!c.dirty) return cmp === 1;
      if (v.major !== con.major) return v.major > con.major;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > con.minor;
      return cmp === 1;
    case '<':
      return cmp < 0;
    case '>=':
    case '=>':
      return cmp >= 0;
    case '<=':
    case '=<':
      if (!c.dirty) return cmp <= 0;
      if (v.major > con.major) return false;
      return !(v.major === con.major && v.minor > con.minor && !c.minorDirty);
    case '~':
    case '~>':
      return tilde();
    case '^':
      if (cmp < 0) return false;
      if (con.major > 0n || c.minorDirty) return v.major === con.major;
      if (v.major > 0n) return false;
      if (con.minor > 0n || c.patchDirty) return v.minor === con.minor;
      if (v.minor > 0n) return false;
      return con.patch === v.patch;
  }
  return false;
}

function semverCompare(constraint: string, version: string, budget: Budget): boolean {
  const re = semverRegexps();
  for (const m of re.range.all(constraint, -1, budget)) {
    const whole = constraint.slice(m[0], m[1]);
    constraint = constraint.replace(whole, `>= ${group(constraint, m, 1)}, <= ${group(constraint, m, 11)} `);
  }
  const ors = constraint.split('||').map((part) => {
    if (!re.valid.exec(part, 0, budget)) throw new FuncError(`improper constraint: ${part}`);
    const found = re.find.all(part, -1, budget).map((m) => part.slice(m[0], m[1]));
    return (found.length ? found : [part]).map((text): SemConstraint => {
      const m = re.constraint.exec(text, 0, budget);
      if (!m) throw new FuncError(`improper constraint: ${text}`);
      const isX = (s: string) => s === 'x' || s === '*' || s === 'X';
      const [g3, g4, g5, g6] = [3, 4, 5, 6].map((k) => group(text, m, k));
      let ver = group(text, m, 2);
      let dirty = false;
      let minorDirty = false;
      let patchDirty = false;
      if (isX(g3!) || g3 === '') [ver, dirty] = [`0.0.0${g6}`, true];
      else if (isX(g4!.replace(/^\./, '')) || g4 === '')
        [ver, dirty, minorDirty] = [`${g3}.0.0${g6}`, true, true];
      else if (isX(g5!.replace(/^\./, '')) || g5 === '')
        [ver, dirty, patchDirty] = [`${g3}${g4}.0${g6}`, true, true];
      let con: SemVersion;
      try {
        con = parseSemver(ver, budget);
      } catch {
        throw new FuncError('constraint Parser Error');
      }
      return { op: group(text, m, 1), con, dirty, minorDirty, patchDirty };
    });
  });
  const v = parseSemver(version, budget);
  return ors.some((and) => and.every((c) => checkConstraint(v, c)));
}

// ---- the functions ----

/** A parameter's Go type, as text/template checks arguments against it. */
export type ParamType =
  'interface {}' | 'reflect.Value' | 'string' | 'int' | 'bool' | 'float64' | 'map[string]interface {}';

export interface GoFunction {
  params: ParamType[];
  variadic?: ParamType;
  call(args: GoValue[], budget: Budget): GoValue;
}

const fn = (params: ParamType[], call: GoFunction['call'], variadic?: ParamType): GoFunction => ({
  params,
  variadic,
  call,
});
const A = 'interface {}' as const;
const V = 'reflect.Value' as const;
const S = 'string' as const;
const I = 'int' as const;
const M = 'map[string]interface {}' as const;

const int = (n: bigint | number) => new GoInt(BigInt(n), 'int');
const int64 = (n: bigint) => new GoInt(n, 'int64');
const str = (v: GoValue) => v as string;
const num = (v: GoValue) => Number((v as GoInt).value);
const map = (v: GoValue) => v as GoMap;
const strings = (items: string[]) => new GoList(items, 'string');

/** reflect's indirectInterface: a nil interface is no value. */
const indirect = (v: GoValue) => (v === null ? undefined : v);

function listItems(v: GoValue, what: string): GoValue[] {
  if (v === undefined || v === null) throw new FuncError(NIL_DEREF);
  if (!(v instanceof GoList)) throw new FuncError(`Cannot ${what} type ${goKindName(v)}`);
  return v.items;
}

function basicKind(v: GoValue): 'invalid' | 'bool' | 'int' | 'float' | 'string' {
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof GoInt) return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  return 'invalid';
}

function eq(args: GoValue[], budget: Budget): boolean {
  const a = indirect(args[0]);
  if (args.length < 2) throw new FuncError('missing argument for comparison');
  const k1 = basicKind(a);
  for (const raw of args.slice(1)) {
    const b = indirect(raw);
    const k2 = basicKind(b);
    let truth = false;
    if (k1 !== k2) {
      if (a !== undefined && b !== undefined) {
        throw new FuncError(`incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`);
      }
    } else if (k1 === 'int') truth = (a as GoInt).value === (b as GoInt).value;
    else if (k1 !== 'invalid') truth = a === b;
    else if (a === undefined || b === undefined) truth = a === b;
    else if (!(a instanceof GoList || a instanceof GoMap) || !(b instanceof GoList || b instanceof GoMap))
      truth = false;
    else if (goKindName(a) !== goKindName(b)) {
      throw new FuncError(
        `non-comparable types ${sprintf('%s', [a], budget)}: ${goTypeName(a)}, ${goTypeName(b)}: ${sprintf('%s', [b], budget)}`,
      );
    } else throw new FuncError(`non-comparable type ${sprintf('%s', [b], budget)}: ${goTypeName(b)}`);
    if (truth) return true;
  }
  return false;
}

function lt(x: GoValue, y: GoValue): boolean {
  const a = indirect(x);
  const b = indirect(y);
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k2 === 'invalid') throw new FuncError('invalid type for comparison');
  if (k1 !== k2)
    throw new FuncError(`incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`);
  if (k1 === 'bool') throw new FuncError('invalid type for comparison');
  if (k1 === 'int') return (a as GoInt).value < (b as GoInt).value;
  if (k1 === 'string') return compareGoStrings(a as string, b as string) < 0;
  return (a as number) < (b as number);
}

/** index's and slice's index argument. */
function indexArg(v: GoValue, cap: number): number {
  const x = indirect(v);
  if (x === undefined) throw new FuncError('cannot index slice/array with nil');
  if (!(x instanceof GoInt)) throw new FuncError(`cannot index slice/array with type ${goTypeName(x)}`);
  if (x.value < 0n || x.value > BigInt(cap)) throw new FuncError(`index out of range: ${x.value}`);
  return Number(x.value);
}

const BUILTINS: Record<string, GoFunction> = {
  and: fn([V], () => undefined, V),
  or: fn([V], () => undefined, V),
  not: fn([V], ([a]) => !isTrue(indirect(a))),
  len: fn([V], ([a]) => {
    if (a === null) throw new FuncError('len of nil pointer');
    if (a === undefined) throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
    if (typeof a === 'string') return int(byteLength(a));
    if (a instanceof GoList) return int(a.items.length);
    if (a instanceof GoMap) return int(a.entries.size);
    throw new FuncError(`len of type ${goTypeName(a)}`);
  }),
  index: fn(
    [V],
    ([item, ...indexes]) => {
      let v: GoValue = indirect(item);
      if (v === undefined) throw new FuncError('index of untyped nil');
      for (const index of indexes) {
        if (v === null || v === undefined) throw new FuncError('index of nil pointer');
        if (typeof v === 'string') {
          const bytes = utf8(v);
          const i = indexArg(index, bytes.length);
          if (i === bytes.length) throw new FuncError(`index out of range: ${i}`);
          v = new GoInt(BigInt(bytes[i]!), 'uint8');
        } else if (v instanceof GoList) {
          const i = indexArg(index, v.items.length);
          if (i === v.items.length) throw new FuncError(`index out of range: ${i}`);
          v = v.items[i];
        } else if (v instanceof GoMap) {
          const key = indirect(index);
          if (key === undefined) {
            v = v.elem === 'string' ? '' : null;
            continue;
          }
          if (typeof key !== 'string')
            throw new FuncError(`value has type ${goTypeName(key)}; should be string`);
          v = v.entries.has(key) ? v.entries.get(key) : v.elem === 'string' ? '' : null;
        } else throw new FuncError(`can't index item of type ${goTypeName(v)}`);
      }
      return v;
    },
    V,
  ),
  slice: fn(
    [V],
    ([item, ...indexes]) => {
      const v = indirect(item);
      if (v === undefined) throw new FuncError('slice of untyped nil');
      if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
      if (typeof v === 'string' && indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
      if (typeof v !== 'string' && !(v instanceof GoList))
        throw new FuncError(`can't slice item of type ${goTypeName(v)}`);
      const len = typeof v === 'string' ? byteLength(v) : v.items.length;
      const idx = [0, len, len];
      indexes.forEach((x, i) => (idx[i] = indexArg(x, len)));
      if (idx[0]! > idx[1]!) throw new FuncError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
      if (indexes.length === 3 && idx[1]! > idx[2]!)
        throw new FuncError(`invalid slice index: ${idx[1]} > ${idx[2]}`);
      if (typeof v === 'string') return utf8(v).subarray(idx[0], idx[1]).toString('utf8');
      return new GoList(v.items.slice(idx[0], idx[1]), v.elem);
    },
    V,
  ),
  call: fn(
    [V],
    ([f]) => {
      throw new FuncError(
        f === undefined || f === null ? 'call of nil' : `non-function of type ${goTypeName(f)}`,
      );
    },
    V,
  ),
  print: fn([], (args, b) => sprint(args, b), A),
  printf: fn([S], ([f, ...args], b) => sprintf(str(f), args, b), A),
  println: fn([], (args, b) => sprintln(args, b), A),
  html: fn(
    [],
    (args, b) =>
      evalArgs(args, b).replace(
        /[\0"'&<>]/g,
        (c) => ({ '\0': '\uFFFD', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!,
      ),
    A,
  ),
  js: fn([], (args, b) => jsEscape(evalArgs(args, b)), A),
  urlquery: fn(
    [],
    (args, b) =>
      encodeURIComponent(evalArgs(args, b))
        .replace(/%20/g, '+')
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    A,
  ),
  eq: fn([V], (args, b) => eq(args, b), V),
  ne: fn([V, V], ([a, c], b) => !eq([a, c], b)),
  lt: fn([V, V], ([a, b]) => lt(a, b)),
  le: fn([V, V], ([a, c], b) => lt(a, c) || eq([a, c], b)),
  gt: fn([V, V], ([a, c], b) => !(lt(a, c) || eq([a, c], b))),
  ge: fn([V, V], ([a, b]) => !lt(a, b)),
};

/** text/template's evalArgs: fmt.Sprint, except that no value prints as text/template prints it. */
function evalArgs(args: GoValue[], budget: Budget): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(
    args.map((a) => (a === null || a === undefined ? '<no value>' : a)),
    budget,
  );
}

/** text/template's JSEscapeString. */
function jsEscape(s: string): string {
  const named: Record<string, string> = {
    '\\': '\\\\',
    "'": "\\'",
    '"': '\\"',
    '<': '\\u003C',
    '>': '\\u003E',
    '&': '\\u0026',
    '=': '\\u003D',
  };
  let out = '';
  for (const c of s) {
    const r = c.codePointAt(0)!;
    if (named[c]) out += named[c];
    else if (r < 0x20) out += `\\u00${r.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (r >= 0x80 && !isPrintRune(r)) out += `\\u${r.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += c;
  }
  return out;
}

const listOf =
  (what: string, f: (items: GoValue[], list: GoList, b: Budget) => GoValue) =>
  ([l]: GoValue[], b: Budget) =>
    f(listItems(l, what), l as GoList, b);

function toStringKeyed(v: GoValue[], b: Budget): GoMap {
  const m = new GoMap();
  for (let i = 0; i < v.length; i += 2) m.entries.set(strval(v[i], b), i + 1 < v.length ? v[i + 1] : '');
  return m;
}

function setEntry(d: GoMap, key: string, value: GoValue | typeof DELETE): GoMap {
  if (d.isNil) throw new FuncError('assignment to entry in nil map');
  if (value === DELETE) d.entries.delete(key);
  else d.entries.set(key, value);
  return d;
}
const DELETE = Symbol('delete');

function dig(args: GoValue[]): GoValue {
  if (args.length < 3) throw new FuncError('dig needs at least three arguments');
  let d = args[args.length - 1];
  const def = args[args.length - 2];
  const keys = args.slice(0, -2);
  for (const [i, k] of keys.entries()) {
    if (!(d instanceof GoMap) || d.elem !== A) {
      throw new FuncError(
        `interface conversion: interface {} is ${goTypeName(d)}, not map[string]interface {}`,
      );
    }
    if (typeof k !== 'string')
      throw new FuncError(`interface conversion: interface {} is ${goTypeName(k)}, not string`);
    if (!d.entries.has(k)) return def;
    d = d.entries.get(k);
    if (i === keys.length - 1) return d;
  }
  return def;
}

function untilStep(start: number, stop: number, step: number, budget: Budget): number[] {
  const count = step === 0 ? 0 : Math.ceil((stop - start) / step);
  if (count > budget.maxBytes) throw new LimitError(`a list of ${count} numbers exceeds the bound`);
  budget.charge(Math.max(count, 0) / 64);
  const out: number[] = [];
  if (stop < start) {
    if (step >= 0) return out;
    for (let i = start; i > stop; i += step) out.push(i);
    return out;
  }
  if (step <= 0) return out;
  for (let i = start; i < stop; i += step) out.push(i);
  return out;
}

function seq(params: number[], budget: Budget): string {
  let nums: number[];
  if (params.length === 1) {
    const end = params[0]!;
    const inc = end < 1 ? -1 : 1;
    nums = untilStep(1, end + inc, inc, budget);
  } else if (params.length === 2) {
    const [start, end] = params as [number, number];
    const step = end < start ? -1 : 1;
    nums = untilStep(start, end + step, step, budget);
  } else if (params.length === 3) {
    const [start, step, end] = params as [number, number, number];
    let inc = 1;
    if (end < start) {
      inc = -1;
      if (step > 0) return '';
    }
    nums = untilStep(start, end + inc, step, budget);
  } else return '';
  return nums.join(' ');
}

const hash = (algorithm: string) =>
  fn([S], ([s]) =>
    createHash(algorithm)
      .update(utf8(str(s)))
      .digest('hex'),
  );

function adler32(s: string): string {
  let a = 1;
  let b = 0;
  for (const byte of utf8(s)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return String(((b << 16) | a) >>> 0);
}

/** path.Clean. */
function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
    } else out.push(part);
  }
  const joined = (rooted ? '/' : '') + out.join('/');
  return joined === '' ? '.' : joined;
}
function basePath(p: string): string {
  if (p === '') return '.';
  p = p.replace(/\/+$/, '');
  if (p === '') return '/';
  return p.slice(p.lastIndexOf('/') + 1);
}
function dirPath(p: string): string {
  return cleanPath(p.slice(0, p.lastIndexOf('/') + 1));
}
function extPath(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

const regexFns = (must: boolean): Record<string, GoFunction> => {
  const m = must ? 'must' : '';
  const name = (n: string) => (must ? `${m}${n[0]!.toUpperCase()}${n.slice(1)}` : n);
  return {
    [name('regexMatch')]: fn([S, S], ([re, s], b) => {
      try {
        return compileRegexp(str(re), false).exec(str(s), 0, b) !== null;
      } catch (error) {
        if (must || !(error instanceof FuncError)) throw error;
        return false;
      }
    }),
    [name('regexFindAll')]: fn([S, S, I], ([re, s, n], b) =>
      strings(
        compileRegexp(str(re), !must)
          .all(str(s), num(n), b)
          .map((x) => str(s).slice(x[0], x[1])),
      ),
    ),
    [name('regexFind')]: fn([S, S], ([re, s], b) => {
      const x = compileRegexp(str(re), !must).exec(str(s), 0, b);
      return x ? str(s).slice(x[0], x[1]) : '';
    }),
    [name('regexReplaceAll')]: fn([S, S, S], ([re, s, r], b) =>
      compileRegexp(str(re), !must).replaceAll(str(s), str(r), false, b),
    ),
    [name('regexReplaceAllLiteral')]: fn([S, S, S], ([re, s, r], b) =>
      compileRegexp(str(re), !must).replaceAll(str(s), str(r), true, b),
    ),
    [name('regexSplit')]: fn([S, S, I], ([re, s, n], b) =>
      strings(compileRegexp(str(re), !must).split(str(s), num(n), b)),
    ),
  };
};

const listFns = (must: boolean): Record<string, GoFunction> => {
  const name = (n: string) => (must ? `must${n[0]!.toUpperCase()}${n.slice(1)}` : n);
  const fns: Record<string, GoFunction> = {
    [name('first')]: fn(
      [A],
      listOf('find first on', (items) => (items.length ? items[0]! : null)),
    ),
    [name('last')]: fn(
      [A],
      listOf('find last on', (items) => (items.length ? items[items.length - 1]! : null)),
    ),
    [name('rest')]: fn(
      [A],
      listOf('find rest on', (items) => new GoList(items.slice(1), A, items.length === 0)),
    ),
    [name('initial')]: fn(
      [A],
      listOf('find initial on', (items) => new GoList(items.slice(0, -1), A, items.length === 0)),
    ),
    [name('reverse')]: fn(
      [A],
      listOf('find reverse on', (items) => new GoList([...items].reverse())),
    ),
    [name('compact')]: fn(
      [A],
      listOf('compact on', (items) => new GoList(items.filter(isTrue))),
    ),
    [name('uniq')]: fn(
      [A],
      listOf('find uniq on', (items, _, b) => {
        const out: GoValue[] = [];
        for (const x of items) if (!out.some((y) => deepEqual(x, y, b))) out.push(x);
        return new GoList(out);
      }),
    ),
    [name('without')]: fn(
      [A],
      ([l, ...omit], b) =>
        new GoList(listItems(l, 'find without on').filter((x) => !omit.some((y) => deepEqual(x, y, b)))),
      A,
    ),
    [name('has')]: fn([A, A], ([needle, hay], b) => {
      if (hay === null || hay === undefined) return false;
      return listItems(hay, 'find has on').some((x) => deepEqual(needle, x, b));
    }),
    [name('append')]: fn([A, A], ([l, v]) => new GoList([...listItems(l, 'push on'), v])),
    [name('push')]: fn([A, A], ([l, v]) => new GoList([...listItems(l, 'push on'), v])),
    [name('prepend')]: fn([A, A], ([l, v]) => new GoList([v, ...listItems(l, 'prepend on')])),
    [name('slice')]: fn(
      [A],
      ([l, ...idx]) => {
        if (l === undefined || l === null) throw new FuncError(NIL_DEREF);
        if (!(l instanceof GoList))
          throw new FuncError(`list should be type of slice or array but ${goKindName(l)}`);
        if (l.items.length === 0) return null;
        const start = idx.length > 0 ? Number(toInt64(idx[0])) : 0;
        const end = idx.length > 1 ? Number(toInt64(idx[1])) : l.items.length;
        if (start < 0 || start > end || end > l.items.length) {
          throw new FuncError(`reflect: slice index out of range`);
        }
        return new GoList(l.items.slice(start, end), l.elem);
      },
      A,
    ),
    [name('chunk')]: fn([I, A], ([n, l]) => {
      // sprig sizes the chunks in float64 arithmetic; a size that is not positive ends in Go's makeslice panic.
      const items = listItems(l, 'chunk');
      const size = num(n);
      const overflow = new FuncError('runtime error: makeslice: len out of range');
      const count = Math.floor((items.length - 1) / size) + 1;
      if (!Number.isFinite(count) || count < 0) throw overflow;
      const out: GoValue[] = [];
      for (let i = 0; i < count; i++) {
        let length = size;
        if (i === count - 1) length = Math.floor(items.length % size) || size;
        if (length < 0) throw overflow;
        if (i * size + length > items.length) throw new FuncError('reflect: slice index out of range');
        out.push(new GoList(items.slice(i * size, i * size + length)));
      }
      return new GoList(out);
    }),
  };
  return fns;
};

const SPRIG: Record<string, GoFunction> = {
  hello: fn([], () => 'Hello!'),
  // strings
  trunc: fn([I, S], ([c, s]) => {
    const b = utf8(str(s));
    const n = num(c);
    if (n < 0 && b.length + n > 0) return b.subarray(b.length + n).toString('utf8');
    if (n >= 0 && b.length > n) return b.subarray(0, n).toString('utf8');
    return str(s);
  }),
  trim: fn([S], ([s]) => str(s).replace(TRIM_SPACE, '')),
  upper: fn([S], ([s]) => mapRunes(str(s), (c) => c.toUpperCase())),
  lower: fn([S], ([s]) => mapRunes(str(s), (c) => c.toLowerCase())),
  title: fn([S], ([s]) => goTitle(str(s))),
  untitle: fn([S], ([s]) => {
    const [first = '', ...rest] = [...str(s)];
    return mapRunes(first, (c) => c.toLowerCase()) + rest.join('');
  }),
  substr: fn([I, I, S], ([a, z, s]) => {
    const b = utf8(str(s));
    const [start, end] = [num(a), num(z)];
    const bad = (bounds: string) => new FuncError(`runtime error: slice bounds out of range ${bounds}`);
    if (start < 0) {
      if (end < 0 || end > b.length) throw bad(end < 0 ? `[:${end}]` : `[:${end}] with length ${b.length}`);
      return b.subarray(0, end).toString('utf8');
    }
    if (end < 0 || end > b.length) {
      if (start > b.length) throw bad(`[${start}:${b.length}]`);
      return b.subarray(start).toString('utf8');
    }
    if (start > end) throw bad(`[${start}:${end}]`);
    return b.subarray(start, end).toString('utf8');
  }),
  repeat: fn([I, S], ([n, s], b) => {
    if (num(n) < 0) throw new FuncError('strings: negative Repeat count');
    return repeatBounded(str(s), num(n), b);
  }),
  trimall: fn([S, S], ([a, s]) => goTrim(str(s), str(a))),
  trimAll: fn([S, S], ([a, s]) => goTrim(str(s), str(a))),
  trimSuffix: fn([S, S], ([a, s]) =>
    str(s).endsWith(str(a)) ? str(s).slice(0, str(s).length - str(a).length) : str(s),
  ),
  trimPrefix: fn([S, S], ([a, s]) => (str(s).startsWith(str(a)) ? str(s).slice(str(a).length) : str(s))),
  nospace: fn([S], ([s]) => str(s).replace(/\s/gu, '')),
  initials: fn([S], ([s]) =>
    str(s)
      .split(/\s+/u)
      .filter(Boolean)
      .map((w) => [...w][0])
      .join(''),
  ),
  swapcase: fn([S], ([s]) => {
    let wasSpace = true;
    return mapRunes(str(s), (c) => {
      const upper = c !== c.toLowerCase();
      const lower = c !== c.toUpperCase();
      const out = upper ? c.toLowerCase() : lower && wasSpace ? c.toUpperCase() : lower ? c.toUpperCase() : c;
      wasSpace = /\s/u.test(c);
      return out;
    });
  }),
  contains: fn([S, S], ([sub, s]) => str(s).includes(str(sub))),
  hasPrefix: fn([S, S], ([sub, s]) => str(s).startsWith(str(sub))),
  hasSuffix: fn([S, S], ([sub, s]) => str(s).endsWith(str(sub))),
  quote: fn(
    [],
    (args, b) =>
      args
        .filter((x) => x !== null && x !== undefined)
        .map((x) => quoteGo(strval(x, b)))
        .join(' '),
    A,
  ),
  squote: fn(
    [],
    (args, b) =>
      args
        .filter((x) => x !== null && x !== undefined)
        .map((x) => sprintf("'%v'", [x], b))
        .join(' '),
    A,
  ),
  cat: fn(
    [],
    (args, b) =>
      args
        .filter((x) => x !== null && x !== undefined)
        .map((x) => sprintf('%v', [x], b))
        .join(' '),
    A,
  ),
  indent: fn([I, S], ([n, s], b) => {
    const pad = repeatBounded(' ', Math.max(num(n), 0), b);
    return pad + goReplace(str(s), '\n', `\n${pad}`, b);
  }),
  nindent: fn([I, S], ([n, s], b) => {
    const pad = repeatBounded(' ', Math.max(num(n), 0), b);
    return `\n${pad}${goReplace(str(s), '\n', `\n${pad}`, b)}`;
  }),
  replace: fn([S, S, S], ([old, repl, s], b) => goReplace(str(s), str(old), str(repl), b)),
  plural: fn([S, S, I], ([one, many, n]) => (num(n) === 1 ? one : many)),
  sha1sum: hash('sha1'),
  sha256sum: hash('sha256'),
  sha512sum: hash('sha512'),
  adler32sum: fn([S], ([s]) => adler32(str(s))),
  toString: fn([A], ([v], b) => strval(v, b)),
  atoi: fn([S], ([s]) => {
    const n = /^[+-]?\d+$/.test(str(s)) ? BigInt(str(s)) : 0n;
    return int(n >= -(2n ** 63n) && n < 2n ** 63n ? n : 0n);
  }),
  int64: fn([A], ([v]) => int64(toInt64(v))),
  int: fn([A], ([v]) => int(toInt64(v))),
  float64: fn([A], ([v]) => toFloat64(v)),
  seq: fn([], (args, b) => seq(args.map(num), b), I),
  toDecimal: fn([A], ([v], b) => {
    const m = /^([+-]?)([0-7]+)$/.exec(sprint([v], b));
    const n = m ? BigInt(`0o${m[2]}`) * (m[1] === '-' ? -1n : 1n) : 0n;
    return int64(n >= -(2n ** 63n) && n < 2n ** 63n ? n : 0n);
  }),
  split: fn([S, S], ([sep, s]) => {
    const m = new GoMap(new Map(), 'string');
    goSplit(str(s), str(sep)).forEach((part, i) => m.entries.set(`_${i}`, part));
    return m;
  }),
  splitList: fn([S, S], ([sep, s]) => strings(goSplit(str(s), str(sep)))),
  splitn: fn([S, I, S], ([sep, n, s]) => {
    const m = new GoMap(new Map(), 'string');
    const parts = goSplit(str(s), str(sep));
    const limit = num(n);
    const out =
      limit < 0 || parts.length <= limit
        ? parts
        : [...parts.slice(0, limit - 1), parts.slice(limit - 1).join(str(sep))];
    if (limit !== 0) out.forEach((part, i) => m.entries.set(`_${i}`, part));
    return m;
  }),
  toStrings: fn([A], ([v], b) => strings(strslice(v, b))),
  until: fn([I], ([n], b) => new GoList(untilStep(0, num(n), num(n) < 0 ? -1 : 1, b).map(int), 'int')),
  untilStep: fn(
    [I, I, I],
    ([a, z, s], b) => new GoList(untilStep(num(a), num(z), num(s), b).map(int), 'int'),
  ),
  add1: fn([A], ([a]) => int64(toInt64(a) + 1n)),
  add: fn([], (args) => int64(args.reduce<bigint>((sum, v) => sum + toInt64(v), 0n)), A),
  sub: fn([A, A], ([a, b]) => int64(toInt64(a) - toInt64(b))),
  div: fn([A, A], ([a, b]) => {
    if (toInt64(b) === 0n) throw new FuncError('runtime error: integer divide by zero');
    return int64(toInt64(a) / toInt64(b));
  }),
  mod: fn([A, A], ([a, b]) => {
    if (toInt64(b) === 0n) throw new FuncError('runtime error: integer divide by zero');
    return int64(toInt64(a) % toInt64(b));
  }),
  mul: fn(
    [A],
    (args) =>
      int64(args.reduce<bigint>((p, v, i) => (i === 0 ? toInt64(v) : BigInt.asIntN(64, p * toInt64(v))), 0n)),
    A,
  ),
  biggest: fn([A], (args) => int64(args.map(toInt64).reduce((m, v) => (v > m ? v : m))), A),
  max: fn([A], (args) => int64(args.map(toInt64).reduce((m, v) => (v > m ? v : m))), A),
  min: fn([A], (args) => int64(args.map(toInt64).reduce((m, v) => (v < m ? v : m))), A),
  maxf: fn([A], (args) => args.map(toFloat64).reduce((m, v) => Math.max(m, v)), A),
  minf: fn([A], (args) => args.map(toFloat64).reduce((m, v) => Math.min(m, v)), A),
  floor: fn([A], ([a]) => Math.floor(toFloat64(a))),
  ceil: fn([A], ([a]) => Math.ceil(toFloat64(a))),
  round: fn(
    [A, I],
    ([a, p, ...opt]) => {
      const roundOn = opt.length ? (opt[0] as number) : 0.5;
      const pow = 10 ** num(p);
      const digit = pow * toFloat64(a);
      const frac = digit - Math.trunc(digit);
      return (frac >= roundOn ? Math.ceil(digit) : Math.floor(digit)) / pow;
    },
    'float64',
  ),
  join: fn([S, A], ([sep, v], b) => strslice(v, b).join(str(sep))),
  sortAlpha: fn([A], ([v], b) =>
    strings(v instanceof GoList ? strslice(v, b).sort(compareGoStrings) : [strval(v, b)]),
  ),
  // defaults
  default: fn([A], ([d, ...given]) => (given.length === 0 || !isTrue(given[0]) ? d : given[0]!), A),
  empty: fn([A], ([v]) => !isTrue(v)),
  coalesce: fn([], (args) => args.find(isTrue) ?? null, A),
  all: fn([], (args) => args.every(isTrue), A),
  any: fn([], (args) => args.some(isTrue), A),
  fromJson: fn([S], ([s]) => {
    const v = fromJSONText(str(s));
    return v instanceof Object && 'error' in v ? null : (v as GoValue);
  }),
  mustFromJson: fn([S], ([s]) => {
    const v = fromJSONText(str(s));
    if (v instanceof Object && 'error' in v) throw new FuncError(v.error);
    return v as GoValue;
  }),
  toJson: fn([A], ([v], b) => swallow(() => toJSON(v, b, { escapeHTML: true }))),
  toPrettyJson: fn([A], ([v], b) => swallow(() => toJSON(v, b, { indent: '  ', escapeHTML: true }))),
  toRawJson: fn([A], ([v], b) => toJSON(v, b, { escapeHTML: false })),
  mustToJson: fn([A], ([v], b) => toJSON(v, b, { escapeHTML: true })),
  mustToPrettyJson: fn([A], ([v], b) => toJSON(v, b, { indent: '  ', escapeHTML: true })),
  mustToRawJson: fn([A], ([v], b) => toJSON(v, b, { escapeHTML: false })),
  ternary: fn([A, A, 'bool'], ([t, f, c]) => (c ? t : f)),
  // reflection
  typeOf: fn([A], ([v]) => goTypeName(v)),
  typeIs: fn([S, A], ([t, v]) => t === goTypeName(v)),
  typeIsLike: fn([S, A], ([t, v]) => t === goTypeName(v) || `*${str(t)}` === goTypeName(v)),
  kindOf: fn([A], ([v]) => goKindName(v)),
  kindIs: fn([S, A], ([t, v]) => t === goKindName(v)),
  deepEqual: fn([A, A], ([a, c], b) => deepEqual(a, c, b)),
  // paths
  base: fn([S], ([s]) => basePath(str(s))),
  dir: fn([S], ([s]) => dirPath(str(s))),
  clean: fn([S], ([s]) => cleanPath(str(s))),
  ext: fn([S], ([s]) => extPath(str(s))),
  isAbs: fn([S], ([s]) => str(s).startsWith('/')),
  osBase: fn([S], ([s]) => basePath(str(s))),
  osDir: fn([S], ([s]) => dirPath(str(s))),
  osClean: fn([S], ([s]) => cleanPath(str(s))),
  osExt: fn([S], ([s]) => extPath(str(s))),
  osIsAbs: fn([S], ([s]) => str(s).startsWith('/')),
  // encoding
  b64enc: fn([S], ([s]) => utf8(str(s)).toString('base64')),
  b64dec: fn([S], ([s]) =>
    base64Decode(str(s), 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 4),
  ),
  b32enc: fn([S], ([s]) => base32Encode(str(s))),
  b32dec: fn([S], ([s]) => base64Decode(str(s), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 8)),
  // data structures
  tuple: fn([], (args) => new GoList(args), A),
  list: fn([], (args) => new GoList(args), A),
  dict: fn([], (args, b) => toStringKeyed(args, b), A),
  get: fn([M, S], ([d, k]) => (map(d).entries.has(str(k)) ? map(d).entries.get(str(k))! : '')),
  set: fn([M, S, A], ([d, k, v]) => setEntry(map(d), str(k), v)),
  unset: fn([M, S], ([d, k]) => setEntry(map(d), str(k), DELETE)),
  hasKey: fn([M, S], ([d, k]) => map(d).entries.has(str(k))),
  pluck: fn(
    [S],
    ([k, ...ds]) =>
      new GoList(
        ds
          .map(map)
          .filter((d) => d.entries.has(str(k)))
          .map((d) => d.entries.get(str(k))!),
      ),
    M,
  ),
  // sprig returns keys and values in Go's map order, which is random; key order makes a render repeatable.
  keys: fn([], (ds) => strings(ds.flatMap((d) => [...map(d).entries.keys()]).sort(compareGoStrings)), M),
  pick: fn(
    [M],
    ([d, ...ks]) =>
      new GoMap(
        new Map(
          ks.filter((k) => map(d).entries.has(str(k))).map((k) => [str(k), map(d).entries.get(str(k))]),
        ),
      ),
    S,
  ),
  omit: fn([M], ([d, ...ks]) => new GoMap(new Map([...map(d).entries].filter(([k]) => !ks.includes(k)))), S),
  values: fn([M], ([d]) => new GoList(sortedKeys(map(d)).map((k) => map(d).entries.get(k)))),
  dig: fn([], (args) => dig(args), A),
  concat: fn(
    [],
    (lists) => {
      const out: GoValue[] = [];
      for (const l of lists) {
        if (l === undefined || l === null) throw new FuncError(NIL_DEREF);
        if (!(l instanceof GoList)) throw new FuncError(`Cannot concat type ${goKindName(l)} as list`);
        out.push(...l.items);
      }
      return new GoList(out, A, out.length === 0);
    },
    A,
  ),
  ...listFns(false),
  ...listFns(true),
  // semver, regexps, flow control
  semverCompare: fn([S, S], ([c, v], b) => semverCompare(str(c), str(v), b)),
  ...regexFns(false),
  ...regexFns(true),
  regexQuoteMeta: fn([S], ([s]) => str(s).replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')),
  fail: fn([S], ([msg]) => {
    throw new FuncError(str(msg));
  }),
};

function swallow(f: () => string): string {
  try {
    return f();
  } catch (error) {
    if (error instanceof FuncError) return '';
    throw error;
  }
}

/**
 * Sprig's hermetic functions this port does not have: a template calling one fails to parse, saying so, rather than
 * rendering something upstream would not (dates need a clock, crypto needs randomness or keys, the rest need
 * libraries whose exact behaviour is not worth porting for templates that patch Kubernetes objects).
 */
const UNSUPPORTED = new Set([
  'ago',
  'duration',
  'durationRound',
  'must_date_modify',
  'mustDateModify',
  'mustToDate',
  'toDate',
  'unixEpoch',
  'abbrev',
  'abbrevboth',
  'shuffle',
  'snakecase',
  'camelcase',
  'kebabcase',
  'wrap',
  'wrapWith',
  'add1f',
  'addf',
  'subf',
  'divf',
  'mulf',
  'merge',
  'mergeOverwrite',
  'mustMerge',
  'mustMergeOverwrite',
  'deepCopy',
  'mustDeepCopy',
  'bcrypt',
  'htpasswd',
  'genPrivateKey',
  'derivePassword',
  'buildCustomCert',
  'genCA',
  'genCAWithKey',
  'genSelfSignedCert',
  'genSelfSignedCertWithKey',
  'genSignedCert',
  'genSignedCertWithKey',
  'encryptAES',
  'decryptAES',
  'semver',
  'urlParse',
  'urlJoin',
]);

/** The functions a template may call: text/template's builtins, overridden by sprig's where both have one. */
export function functionTable(sprig: boolean): {
  lookup(name: string): { fn: GoFunction; builtin: boolean } | undefined;
  has(name: string): boolean | null;
} {
  return {
    lookup(name) {
      if (sprig && Object.hasOwn(SPRIG, name)) return { fn: SPRIG[name]!, builtin: false };
      if (Object.hasOwn(BUILTINS, name)) return { fn: BUILTINS[name]!, builtin: true };
      return undefined;
    },
    has(name) {
      if (Object.hasOwn(BUILTINS, name) || (sprig && Object.hasOwn(SPRIG, name))) return true;
      return sprig && UNSUPPORTED.has(name) ? null : false;
    },
  };
}
