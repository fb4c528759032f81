/**
 * A port of the parts of CPython 3.11's argparse (`_parse_known_args` and what it calls) that the IGNITE
 * mime tool exposes (spec/ignite.md 5): long options with unique-prefix abbreviation, `--opt=value` split at
 * the first `=`, short options with attached values (`-oPATH`, `-o=PATH`), `-h` combined with other short
 * flags, nargs 1 / `+` / `*`, `--`, positionals, one required subcommand, required arguments, and argparse's
 * error texts. Parsing follows argparse step by step (classify every argument as `O` or `A`, then consume
 * options and positionals with argparse's nargs patterns), so the quirks match too: an argument with a space
 * is a value unless its `--name=` part names an option, `-5` is a value, and the first `--` among a value's
 * arguments is dropped (so `--from=--` leaves an empty list, as Python does). Parsing never throws.
 */
import type { ArgValue, ParserSpec } from './argparse-spec.js';
import { pyReprString } from '../../core/python/repr.js';
import { subcommandName } from './argparse-text.js';

/**
 * What argparse would do with a command line: values by dest, help for one parser (exit 0), or an error
 * of one parser (its usage and `<prog>: error: <message>`, exit 2).
 */
export type ParseOutcome =
  | { readonly kind: 'parsed'; readonly values: ReadonlyMap<string, ArgValue> }
  | { readonly kind: 'help'; readonly parser: ParserSpec }
  | { readonly kind: 'error'; readonly parser: ParserSpec; readonly message: string };

type Nargs = 0 | 1 | '+' | '*' | 'parser';
interface Action {
  readonly flags: readonly string[];
  readonly dest: string;
  readonly nargs: Nargs;
  readonly isRequired: boolean;
  readonly check?: ((value: string) => string | undefined) | undefined;
  readonly subparsers?: ReadonlyMap<string, ParserSpec>;
}
interface OptionTuple {
  readonly action: Action | undefined;
  readonly optionString: string;
  readonly explicit: string | undefined;
}

const HELP: Action = { flags: ['-h', '--help'], dest: 'help', nargs: 0, isRequired: false };

/** argparse's `self._actions`, in order: help, the options, the positionals, the subcommands. */
function actionsOf(parser: ParserSpec): Action[] {
  const subs = parser.subcommands;
  return [
    HELP,
    ...parser.options.map((o) => ({ ...o, isRequired: o.isRequired === true })),
    ...parser.positionals.map((p) => ({ ...p, flags: [], nargs: 1 as const, isRequired: true })),
    ...(subs === undefined
      ? []
      : [
          {
            flags: [],
            dest: subs.dest,
            nargs: 'parser' as const,
            isRequired: true,
            subparsers: new Map(subs.parsers.map((p) => [subcommandName(parser, p), p])),
          },
        ]),
  ];
}

/** argparse's ArgumentError: `argument <name>: <message>`; becomes the current parser's error. */
class ArgumentError {
  constructor(
    readonly action: Action,
    readonly message: string,
  ) {}
  get text(): string {
    return `argument ${this.action.flags.length > 0 ? this.action.flags.join('/') : this.action.dest}: ${this.message}`;
  }
}

/** argparse's `parser.exit()`: help printed or an error reported, by one (sub)parser. */
class ParseExit {
  constructor(readonly outcome: Exclude<ParseOutcome, { kind: 'parsed' }>) {}
}

// Python's `^-\d+$|^-\d*\.\d+$`: `\d` is any Unicode decimal digit and `$` also matches before a final `\n`.
const NEGATIVE_NUMBER = /^-\p{Nd}+\n?$|^-\p{Nd}*\.\p{Nd}+\n?$/u;

function nargsPattern(action: Action): string {
  const base = { 0: '(-*-*)', 1: '(-*A-*)', '+': '(-*A[A-]*)', '*': '(-*[A-]*)', parser: '(-*A[-AO]*)' }[
    action.nargs
  ];
  // An option's values never include a `--` (`-` in the pattern).
  return action.flags.length > 0 ? base.replaceAll('-*', '').replaceAll('-', '') : base;
}

function matchArgument(action: Action, pattern: string): number {
  const match = new RegExp(`^${nargsPattern(action)}`).exec(pattern);
  if (match === null) {
    const why = action.nargs === '+' ? 'expected at least one argument' : 'expected one argument';
    throw new ArgumentError(action, why);
  }
  return match[1]?.length ?? 0;
}

function matchPartial(actions: readonly Action[], pattern: string): number[] {
  for (let i = actions.length; i > 0; i--) {
    const match = new RegExp(`^${actions.slice(0, i).map(nargsPattern).join('')}`).exec(pattern);
    if (match !== null) return match.slice(1).map((group) => group.length);
  }
  return [];
}

/** One parse of one parser (argparse's `parse_known_args`): fills `values`, resolves the extras. */
class KnownArgsParse {
  readonly #parser: ParserSpec;
  readonly #argv: readonly string[];
  readonly #values: Map<string, ArgValue>;
  readonly #actions: Action[];
  readonly #optionMap = new Map<string, Action>();
  readonly #seen = new Set<Action>();
  readonly #extras: string[] = [];
  readonly #subExtras: string[] = [];
  #pattern = '';

  constructor(parser: ParserSpec, argv: readonly string[], values: Map<string, ArgValue>) {
    this.#parser = parser;
    this.#argv = argv;
    this.#values = values;
    this.#actions = actionsOf(parser);
    for (const action of this.#actions) for (const flag of action.flags) this.#optionMap.set(flag, action);
  }

  run(): string[] {
    try {
      this.#consumeAll();
    } catch (err) {
      if (err instanceof ArgumentError) throw this.#error(err.text);
      throw err;
    }
    return [...this.#extras, ...this.#subExtras];
  }

  #error(message: string): ParseExit {
    return new ParseExit({ kind: 'error', parser: this.#parser, message });
  }

  #consumeAll(): void {
    const argv = this.#argv;
    const found = new Map<number, OptionTuple>();
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i] ?? '';
      if (arg === '--') {
        this.#pattern += `-${'A'.repeat(argv.length - i - 1)}`;
        break;
      }
      const tuple = this.#classify(arg);
      if (tuple !== undefined) found.set(i, tuple);
      this.#pattern += tuple === undefined ? 'A' : 'O';
    }
    const positionals = this.#actions.filter((a) => a.flags.length === 0);
    const indices = [...found.keys()];
    const maxIndex = indices.length > 0 ? Math.max(...indices) : -1;
    let start = 0;
    while (start <= maxIndex) {
      const next = Math.min(...indices.filter((i) => i >= start));
      if (start !== next) {
        const end = this.#consumePositionals(positionals, start);
        const moved = end > start;
        start = end;
        if (moved) continue;
      }
      if (!found.has(start)) {
        this.#extras.push(...argv.slice(start, next));
        start = next;
      }
      start = this.#consumeOptional(found, start);
    }
    this.#extras.push(...argv.slice(this.#consumePositionals(positionals, start)));
    const missing = this.#actions.filter((a) => a.isRequired && !this.#seen.has(a));
    if (missing.length > 0) {
      const names = missing.map((a) => (a.flags.length > 0 ? a.flags.join('/') : a.dest));
      throw this.#error(`the following arguments are required: ${names.join(', ')}`);
    }
  }

  /** argparse's `_parse_optional`: undefined for a value, else the option (undefined when unknown). */
  #classify(arg: string): OptionTuple | undefined {
    if (!arg.startsWith('-')) return undefined;
    const exact = this.#optionMap.get(arg);
    if (exact !== undefined) return { action: exact, optionString: arg, explicit: undefined };
    if (arg.length === 1) return undefined;
    const eq = arg.indexOf('=');
    if (eq !== -1) {
      const action = this.#optionMap.get(arg.slice(0, eq));
      if (action !== undefined)
        return { action, optionString: arg.slice(0, eq), explicit: arg.slice(eq + 1) };
    }
    const tuples = this.#optionTuples(arg);
    if (tuples.length > 1) {
      const matches = tuples.map((t) => t.optionString).join(', ');
      throw this.#error(`ambiguous option: ${arg} could match ${matches}`);
    }
    if (tuples[0] !== undefined) return tuples[0];
    if (NEGATIVE_NUMBER.test(arg) || arg.includes(' ')) return undefined;
    return { action: undefined, optionString: arg, explicit: undefined };
  }

  /** argparse's `_get_option_tuples`: `--x` matches by prefix (before `=`), `-xVALUE` by its first two. */
  #optionTuples(arg: string): OptionTuple[] {
    const result: OptionTuple[] = [];
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const prefix = eq === -1 ? arg : arg.slice(0, eq);
      const explicit = eq === -1 ? undefined : arg.slice(eq + 1);
      for (const [optionString, action] of this.#optionMap) {
        if (optionString.startsWith(prefix)) result.push({ action, optionString, explicit });
      }
      return result;
    }
    for (const [optionString, action] of this.#optionMap) {
      if (optionString === arg.slice(0, 2)) result.push({ action, optionString, explicit: arg.slice(2) });
      else if (optionString.startsWith(arg)) result.push({ action, optionString, explicit: undefined });
    }
    return result;
  }

  #consumeOptional(found: ReadonlyMap<number, OptionTuple>, start: number): number {
    const tuple = found.get(start);
    if (tuple?.action === undefined) {
      this.#extras.push(this.#argv[start] ?? '');
      return start + 1;
    }
    let action: Action = tuple.action;
    let explicit = tuple.explicit;
    const isShort = tuple.optionString[1] !== '-';
    const taken: [Action, string[]][] = [];
    let stop = start + 1;
    for (;;) {
      if (explicit === undefined) {
        const count = matchArgument(action, this.#pattern.slice(start + 1));
        stop = start + 1 + count;
        taken.push([action, this.#argv.slice(start + 1, stop)]);
        break;
      }
      const count = matchArgument(action, 'A');
      if (count === 0 && isShort && explicit !== '') {
        // `-hx`: a flag without a value followed by more single-character flags (only short ones follow).
        taken.push([action, []]);
        const [first = ''] = explicit;
        const next = this.#optionMap.get(`-${first}`);
        if (next === undefined)
          throw new ArgumentError(action, `ignored explicit argument ${pyReprString(explicit)}`);
        action = next;
        explicit = explicit.slice(first.length) || undefined;
      } else if (count === 1) {
        taken.push([action, [explicit]]);
        break;
      } else {
        throw new ArgumentError(action, `ignored explicit argument ${pyReprString(explicit)}`);
      }
    }
    for (const [a, args] of taken) this.#take(a, args);
    return stop;
  }

  #consumePositionals(positionals: Action[], start: number): number {
    const counts = matchPartial(positionals, this.#pattern.slice(start));
    let at = start;
    counts.forEach((count, i) => {
      const action = positionals[i];
      if (action !== undefined) this.#take(action, this.#argv.slice(at, at + count));
      at += count;
    });
    positionals.splice(0, counts.length);
    return at;
  }

  /** argparse's `take_action` with `_get_values`: converts, checks and stores (or runs help, a subparser). */
  #take(action: Action, argStrings: readonly string[]): void {
    this.#seen.add(action);
    const args = [...argStrings];
    if (action.nargs !== 'parser' && args.includes('--')) args.splice(args.indexOf('--'), 1);
    for (const value of action.nargs === 'parser' ? [] : args) {
      const problem = action.check?.(value);
      if (problem !== undefined) throw new ArgumentError(action, problem);
    }
    if (action.nargs === 0) throw new ParseExit({ kind: 'help', parser: this.#parser });
    if (action.subparsers !== undefined) return this.#runSubparser(action, action.subparsers, args);
    this.#values.set(action.dest, action.nargs === 1 && args.length === 1 ? (args[0] ?? '') : args);
  }

  #runSubparser(action: Action, parsers: ReadonlyMap<string, ParserSpec>, args: readonly string[]): void {
    const name = args[0] ?? '';
    const sub = parsers.get(name);
    if (sub === undefined) {
      const choices = [...parsers.keys()].map(pyReprString).join(', ');
      throw new ArgumentError(action, `invalid choice: ${pyReprString(name)} (choose from ${choices})`);
    }
    this.#values.set(action.dest, name);
    this.#subExtras.push(...new KnownArgsParse(sub, args.slice(1), this.#values).run());
  }
}

/**
 * Parses `argv` as argparse's `parser.parse_args(argv)` would, without printing or exiting: the values by
 * dest (only those given; no defaults), a help request, or the error of the parser that reported it
 * (arguments nobody claimed are the top parser's `unrecognized arguments: …`).
 */
export function parseArgs(parser: ParserSpec, argv: readonly string[]): ParseOutcome {
  const values = new Map<string, ArgValue>();
  try {
    const extras = new KnownArgsParse(parser, argv, values).run();
    if (extras.length > 0) {
      return { kind: 'error', parser, message: `unrecognized arguments: ${extras.join(' ')}` };
    }
    return { kind: 'parsed', values };
  } catch (err) {
    if (err instanceof ParseExit) return err.outcome;
    throw err;
  }
}
