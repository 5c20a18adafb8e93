import {
  GoTemplateError,
  nodeString,
  parseTemplate,
  type ArgNode,
  type BranchNode,
  type CommandNode,
  type Node,
  type NumberNode,
  type PipeNode,
  type VariableNode,
} from './go-template-parse.js';
import {
  byteLength,
  FuncError,
  fromJSON,
  functionTable,
  GoInt,
  GoList,
  GoMap,
  goTypeName,
  isTrue,
  LimitError,
  sprint,
  compareGoStrings,
  type Budget,
  type GoFunction,
  type GoValue,
  type ParamType,
} from './go-template-functions.js';

// Renders Go text/template templates as Cluster API renders ClusterClass inline patches (valueFrom.template and
// enabledIf: text/template with sprig.HermeticTxtFuncMap() over the variables decoded into interface{}) and
// naming templates (plain text/template, missingkey=error). The executor follows go/src/text/template/exec.go step by
// step, so that output, truthiness, comparisons and errors (their wording included) are Go's. The template comes from
// whoever writes the ClusterClass: every resource it can make the evaluator spend is bounded, and exceeding a bound
// is a GoTemplateError, never a hang or another kind of error.

export { GoTemplateError };

/** Largest template accepted, in bytes. */
export const MAX_TEMPLATE_BYTES = 64 * 1024;
/** Default bound on the output, and on any string a function makes, in bytes. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Default bound on evaluation steps: nodes walked, commands evaluated, loop iterations, and functions' work. */
export const DEFAULT_MAX_STEPS = 100_000;
/** Deepest nesting of control structures and parenthesised pipelines. */
export const MAX_NESTING_DEPTH = 100;

export interface GoTemplateOptions {
  maxOutputBytes?: number;
  maxSteps?: number;
  /** Whether sprig's hermetic functions are defined (patch templates); naming templates upstream have none. */
  sprig?: boolean;
  /** Go's missingkey option: upstream's naming templates use "error"; patch templates the default. */
  missingKey?: 'default' | 'error';
  /** The template's name in messages (template.New's argument); upstream's patch templates are "tpl". */
  name?: string;
}

/** Renders `template` over `data` as Go's text/template (with sprig hermetic functions) would. Throws GoTemplateError. */
export function renderGoTemplate(template: string, data: unknown, options: GoTemplateOptions = {}): string {
  const name = options.name ?? 'tpl';
  try {
    if (typeof template !== 'string')
      throw new GoTemplateError(`template: ${name}: the template is not a string`);
    const size = byteLength(template);
    if (size > MAX_TEMPLATE_BYTES) {
      throw new GoTemplateError(
        `template: ${name}: the template is ${size} bytes, more than the ${MAX_TEMPLATE_BYTES} allowed`,
        0,
      );
    }
    const funcs = functionTable(options.sprig ?? true);
    const root = parseTemplate(template, {
      name,
      hasFunction: (n) => funcs.has(n),
      maxDepth: MAX_NESTING_DEPTH,
    });
    let dot: GoValue;
    try {
      dot = fromJSON(data === undefined ? null : data);
    } catch (error) {
      throw new GoTemplateError(`template: ${name}: the data cannot be used: ${(error as Error).message}`);
    }
    const state = new State(template, name, funcs, {
      missingKeyError: options.missingKey === 'error',
      maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
      maxBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    });
    return state.execute(dot === null ? undefined : dot, root);
  } catch (error) {
    if (error instanceof GoTemplateError) throw error;
    // A bug here must still reach the caller as a template error, never as something it does not expect.
    const detail = error instanceof RangeError ? 'evaluation nested too deeply' : String(error);
    throw new GoTemplateError(`template: ${name}: internal error: ${detail}`);
  }
}

const MISSING = Symbol('missing');
type Final = GoValue | typeof MISSING;
type Signal = 'break' | 'continue' | undefined;
type Located = Node | ArgNode | CommandNode;

const MAP_TYPE: ParamType = 'map[string]interface {}';

class State {
  private vars: { name: string; value: GoValue }[] = [];
  private node: Located | null = null;
  private out = '';
  private outBytes = 0;
  private steps = 0;
  private readonly budget: Budget;

  constructor(
    private readonly text: string,
    private readonly name: string,
    private readonly funcs: ReturnType<typeof functionTable>,
    private readonly limits: { missingKeyError: boolean; maxSteps: number; maxBytes: number },
  ) {
    this.budget = { maxBytes: limits.maxBytes, charge: (units) => this.step(units) };
  }

  execute(dot: GoValue, root: Node): string {
    this.vars = [{ name: '$', value: dot }];
    try {
      this.walk(dot, root);
    } catch (error) {
      if (error instanceof LimitError) this.errorf(error.message);
      throw error;
    }
    return this.out;
  }

  private step(units = 1): void {
    this.steps += units;
    if (this.steps > this.limits.maxSteps) {
      throw new LimitError(`evaluation exceeded the ${this.limits.maxSteps} steps allowed`);
    }
  }

  private write(text: string): void {
    this.outBytes += byteLength(text);
    if (this.outBytes > this.limits.maxBytes) {
      throw new LimitError(`output exceeded the ${this.limits.maxBytes} bytes allowed`);
    }
    this.out += text;
  }

  private at(node: Located): void {
    this.node = node;
  }

  /** Go's state.errorf: `template: NAME:LINE:COL: executing "NAME" at <NODE>: MESSAGE`, COL counted in bytes. */
  private errorf(message: string): never {
    const node = this.node;
    if (!node) throw new GoTemplateError(`template: ${this.name}: ${message}`);
    const before = this.text.slice(0, node.pos);
    const lineStart = before.lastIndexOf('\n') + 1;
    const line = before.split('\n').length;
    const column = byteLength(before.slice(lineStart));
    throw new GoTemplateError(
      `template: ${this.name}:${line}:${column}: executing "${this.name}" at <${nodeString(node)}>: ${message}`,
      node.pos,
    );
  }

  private walk(dot: GoValue, node: Node): Signal {
    this.step();
    this.at(node);
    switch (node.kind) {
      case 'action': {
        // Variables an action declares persist until the enclosing {{end}}; a declaration prints nothing.
        const value = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, value);
        return undefined;
      }
      case 'break':
      case 'continue':
        return node.kind;
      case 'if':
      case 'with':
        return this.walkIfOrWith(dot, node);
      case 'list':
        for (const child of node.nodes) {
          const signal = this.walk(dot, child);
          if (signal) return signal;
        }
        return undefined;
      case 'range':
        return this.walkRange(dot, node);
      case 'text':
        this.write(node.text);
        return undefined;
    }
  }

  private walkIfOrWith(dot: GoValue, node: BranchNode): Signal {
    const mark = this.vars.length;
    try {
      const value = this.evalPipeline(dot, node.pipe);
      if (isTrue(value)) return this.walk(node.kind === 'with' ? value : dot, node.list);
      return node.elseList ? this.walk(dot, node.elseList) : undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkRange(dot: GoValue, r: BranchNode): Signal {
    this.at(r);
    const outerMark = this.vars.length;
    try {
      const value = this.evalPipeline(dot, r.pipe);
      const mark = this.vars.length;
      const { decl, isAssign } = r.pipe;
      const iterate = (index: GoValue, elem: GoValue): Signal => {
        this.step();
        if (decl.length > 0) {
          if (isAssign) this.setVar(decl[0]!.ident[0]!, decl.length > 1 ? index : elem);
          else this.vars[this.vars.length - 1]!.value = elem;
        }
        if (decl.length > 1) {
          if (isAssign) this.setVar(decl[1]!.ident[0]!, elem);
          else this.vars[this.vars.length - 2]!.value = index;
        }
        try {
          return this.walk(elem, r.list);
        } finally {
          this.vars.length = mark;
        }
      };
      let ran = false;
      if (value instanceof GoInt) {
        if (decl.length > 1)
          this.errorf(`can't use ${sprint([value], this.budget)} to iterate over more than one variable`);
        for (let i = 0n; i < value.value; i++) {
          ran = true;
          if (iterate(undefined, new GoInt(i, value.type)) === 'break') break;
        }
      } else if (value instanceof GoList) {
        for (let i = 0; i < value.items.length; i++) {
          ran = true;
          if (iterate(new GoInt(BigInt(i)), value.items[i]) === 'break') break;
        }
      } else if (value instanceof GoMap) {
        // Go ranges over a map in key order, over the entries as they were when the range began.
        const entries = [...value.entries].sort(([a], [b]) => compareGoStrings(a, b));
        for (const [key, elem] of entries) {
          ran = true;
          if (iterate(key, elem) === 'break') break;
        }
      } else if (value !== undefined) {
        this.errorf(`range can't iterate over ${sprint([value], this.budget)}`);
      }
      if (!ran && r.elseList) return this.walk(dot, r.elseList);
      return undefined;
    } finally {
      this.vars.length = outerMark;
    }
  }

  private evalPipeline(dot: GoValue, pipe: PipeNode): GoValue {
    this.at(pipe);
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // A nil interface{} result is no value from here on, as Go's evalPipeline digs into interfaces.
      if (value === null) value = undefined;
    }
    const result = value as GoValue;
    for (const variable of pipe.decl) {
      if (pipe.isAssign) this.setVar(variable.ident[0]!, result);
      else this.vars.push({ name: variable.ident[0]!, value: result });
    }
    return result;
  }

  private notAFunction(args: ArgNode[] | null, final: Final): void {
    if (args && (args.length > 1 || final !== MISSING)) {
      this.errorf(`can't give argument to non-function ${nodeString(args[0]!)}`);
    }
  }

  private evalCommand(dot: GoValue, cmd: CommandNode, final: Final): GoValue {
    this.step();
    const first = cmd.args[0]!;
    switch (first.kind) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.kind) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        return this.errorf('nil is not a command');
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
  }

  /** A number whose type the context does not give: float64 if it is written like one, else int. */
  private idealConstant(n: NumberNode): GoValue {
    this.at(n);
    const hexInt = /^0[xX]/.test(n.text) && n.text.length > 2 && !/[pP]/.test(n.text);
    if (n.isFloat && !hexInt && !n.text.startsWith("'") && /[.eEpP]/.test(n.text)) return n.float64;
    if (n.isInt) return new GoInt(n.int64);
    if (n.isUint) this.errorf(`${n.text} overflows int`);
    return undefined;
  }

  private evalFieldNode(
    dot: GoValue,
    field: ArgNode & { kind: 'field' },
    args: ArgNode[] | null,
    final: Final,
  ) {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  private evalChainNode(
    dot: GoValue,
    chain: ArgNode & { kind: 'chain' },
    args: ArgNode[] | null,
    final: Final,
  ) {
    this.at(chain);
    if (chain.node.kind === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const receiver = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, receiver, chain, chain.field, args, final);
  }

  private evalVariableNode(
    dot: GoValue,
    variable: VariableNode,
    args: ArgNode[] | null,
    final: Final,
  ): GoValue {
    this.at(variable);
    const value = this.varValue(variable.ident[0]!);
    if (variable.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, variable, variable.ident.slice(1), args, final);
  }

  private evalFieldChain(
    dot: GoValue,
    receiver: GoValue,
    node: ArgNode,
    ident: string[],
    args: ArgNode[] | null,
    final: Final,
  ): GoValue {
    for (let i = 0; i < ident.length - 1; i++)
      receiver = this.evalField(ident[i]!, null, MISSING, receiver, i > 0);
    return this.evalField(ident[ident.length - 1]!, args, final, receiver, ident.length > 1);
  }

  private evalField(
    name: string,
    args: ArgNode[] | null,
    final: Final,
    receiver: GoValue,
    fromMap: boolean,
  ): GoValue {
    if (receiver === undefined) {
      if (this.limits.missingKeyError) this.errorf(`nil data; no entry for key "${name}"`);
      return undefined;
    }
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${name}`);
    if (receiver instanceof GoMap) {
      if ((args?.length ?? 0) > 1 || final !== MISSING)
        this.errorf(`${name} is not a method but has arguments`);
      if (receiver.entries.has(name)) return receiver.entries.get(name);
      if (this.limits.missingKeyError) this.errorf(`map has no entry for key "${name}"`);
      return undefined;
    }
    // Values reached through a map are interface{} to Go, which names that type rather than what it holds.
    this.errorf(`can't evaluate field ${name} in type ${fromMap ? 'interface {}' : goTypeName(receiver)}`);
  }

  private evalFunction(
    dot: GoValue,
    node: ArgNode & { kind: 'identifier' },
    cmd: Located,
    args: ArgNode[] | null,
    final: Final,
  ): GoValue {
    this.at(node);
    const found = this.funcs.lookup(node.ident);
    if (!found) this.errorf(`"${node.ident}" is not a defined function`);
    return this.evalCall(dot, found.fn, found.builtin, cmd, node.ident, args, final);
  }

  private evalCall(
    dot: GoValue,
    fn: GoFunction,
    isBuiltin: boolean,
    node: Located,
    name: string,
    args: ArgNode[] | null,
    final: Final,
  ): GoValue {
    const argNodes = args ? args.slice(1) : [];
    const numIn = argNodes.length + (final !== MISSING ? 1 : 0);
    let numFixed = argNodes.length;
    if (fn.variadic) {
      numFixed = fn.params.length;
      if (numIn < numFixed)
        this.errorf(`wrong number of args for ${name}: want at least ${numFixed} got ${argNodes.length}`);
    } else if (numIn !== fn.params.length) {
      this.errorf(`wrong number of args for ${name}: want ${fn.params.length} got ${numIn}`);
    }

    // and/or evaluate their arguments only until the result is known, and return that argument itself.
    if (isBuiltin && (name === 'and' || name === 'or')) {
      let value: GoValue = undefined;
      for (const arg of argNodes) {
        value = this.evalArg(dot, 'reflect.Value', arg);
        if (isTrue(value) === (name === 'or')) return value;
      }
      if (final !== MISSING) value = this.validateType(final, 'reflect.Value');
      return value;
    }

    const argv: GoValue[] = [];
    let i = 0;
    for (; i < numFixed && i < argNodes.length; i++)
      argv.push(this.evalArg(dot, fn.params[i]!, argNodes[i]!));
    if (fn.variadic) for (; i < argNodes.length; i++) argv.push(this.evalArg(dot, fn.variadic, argNodes[i]!));
    if (final !== MISSING) {
      const type = fn.variadic
        ? numIn - 1 < numFixed
          ? fn.params[numIn - 1]!
          : fn.variadic
        : fn.params[fn.params.length - 1]!;
      argv.push(this.validateType(final, type));
    }

    if (isBuiltin && name === 'call') {
      const callee = argv[0];
      this.at(node);
      const what = argNodes[0] ? nodeString(argNodes[0]) : '';
      this.errorf(
        `error calling call: ${callee === undefined || callee === null ? 'call of nil' : `non-function ${what} of type ${goTypeName(callee)}`}`,
      );
    }

    let result: GoValue;
    try {
      result = fn.call(argv, this.budget);
    } catch (error) {
      if (!(error instanceof FuncError)) throw error;
      this.at(node);
      this.errorf(`error calling ${name}: ${error.message}`);
    }
    this.chargeFor(result);
    return result;
  }

  /** What a function made costs in proportion to its size, so a loop cannot build without bound. */
  private chargeFor(value: GoValue): void {
    if (typeof value === 'string') {
      if (value.length > this.limits.maxBytes && byteLength(value) > this.limits.maxBytes) {
        throw new LimitError(`a string exceeded the ${this.limits.maxBytes} bytes allowed`);
      }
      this.step(value.length / 1024);
    } else if (value instanceof GoList) this.step(value.items.length / 64);
    else if (value instanceof GoMap) this.step(value.entries.size / 64);
  }

  /** Go's validateType: the value must be assignable to the parameter's type. */
  private validateType(value: GoValue, type: ParamType | null): GoValue {
    if (value === undefined) {
      if (type === null || type === 'reflect.Value') return undefined;
      if (type === 'interface {}') return null;
      if (type === MAP_TYPE) return new GoMap(new Map(), 'interface {}', true);
      this.errorf(`invalid value; expected ${type}`);
    }
    if (type === null || type === 'interface {}' || type === 'reflect.Value') return value;
    if (value === null) this.errorf(`wrong type for value; expected ${type}; got interface {}`);
    const ok =
      type === 'string'
        ? typeof value === 'string'
        : type === 'int'
          ? value instanceof GoInt && value.type === 'int'
          : type === 'bool'
            ? typeof value === 'boolean'
            : type === 'float64'
              ? typeof value === 'number'
              : value instanceof GoMap && value.elem === 'interface {}';
    if (!ok) this.errorf(`wrong type for value; expected ${type}; got ${goTypeName(value)}`);
    return value;
  }

  private evalArg(dot: GoValue, type: ParamType | null, n: ArgNode): GoValue {
    this.step();
    this.at(n);
    switch (n.kind) {
      case 'dot':
        return this.validateType(dot, type);
      case 'nil':
        if (type === null || type === 'interface {}') return null;
        if (type === 'reflect.Value') return undefined;
        if (type === MAP_TYPE) return new GoMap(new Map(), 'interface {}', true);
        return this.errorf(`cannot assign nil to ${type}`);
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), type);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, null, MISSING), type);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), type);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), type);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), type);
    }
    switch (type) {
      case 'bool':
        if (n.kind === 'bool') return n.value;
        return this.errorf(`expected bool; found ${nodeString(n)}`);
      case 'float64':
        if (n.kind === 'number' && n.isFloat) return n.float64;
        return this.errorf(`expected float; found ${nodeString(n)}`);
      case 'int':
        if (n.kind === 'number' && n.isInt) return new GoInt(n.int64);
        return this.errorf(`expected integer; found ${nodeString(n)}`);
      case 'string':
        if (n.kind === 'string') return n.text;
        return this.errorf(`expected string; found ${nodeString(n)}`);
      case MAP_TYPE:
        return this.errorf(`can't handle ${nodeString(n)} for arg of type ${type}`);
    }
    return this.evalEmptyInterface(dot, n);
  }

  private evalEmptyInterface(dot: GoValue, n: ArgNode): GoValue {
    this.at(n);
    switch (n.kind) {
      case 'bool':
        return n.value;
      case 'dot':
        return dot;
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return n.text;
    }
    return this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
  }

  private printValue(node: Located, value: GoValue): void {
    this.at(node);
    this.write(value === undefined ? '<no value>' : sprint([value], this.budget));
  }

  private varValue(name: string): GoValue {
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) return this.vars[i]!.value;
    return this.errorf(`undefined variable: ${name}`);
  }

  private setVar(name: string, value: GoValue): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }
}
