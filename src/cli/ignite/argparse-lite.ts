/**
 * A small re-implementation of the parts of Python's argparse that the IGNITE mime tool exposes on its
 * command line (spec/ignite.md 5): long options with unique-prefix abbreviation, `--opt=value`, short
 * options with attached values, nargs 1 / `+` / `*`, greedy value consumption, `--`, required options
 * and positionals, and argparse's error texts. Parsing never throws: it returns values or one error.
 */

/** One option of a (sub)command. */
export interface OptionSpec {
  /** Flags as written, e.g. `['-o', '--output']`. */
  readonly flags: readonly string[];
  readonly dest: string;
  readonly nargs: 1 | '+' | '*';
  readonly metavar?: string;
  readonly isRequired?: boolean;
  /** Checks one value; returns an error text (argparse's `argument X: <text>`) or undefined. */
  readonly check?: (value: string) => string | undefined;
  readonly help?: string;
}

/** One positional argument. */
export interface PositionalSpec {
  readonly dest: string;
  readonly check?: (value: string) => string | undefined;
  readonly help?: string;
}

/** A parsed command line: values by dest (strings for nargs 1, arrays otherwise). */
export interface ParsedArgs {
  readonly values: ReadonlyMap<string, string | readonly string[]>;
  readonly isHelp: boolean;
  /** Arguments nobody claimed (argparse reports them as `unrecognized arguments`). */
  readonly extras: readonly string[];
}

/** The outcome of {@link parseArgs}: parsed values, or an error text without the `prog: error: ` part. */
export type ParseOutcome =
  { readonly ok: true; readonly args: ParsedArgs } | { readonly ok: false; readonly error: string };

const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/;

/** True when argparse would read `arg` as an option string rather than a value. */
export function looksLikeOption(arg: string): boolean {
  if (!arg.startsWith('-') || arg === '-') return false;
  if (NEGATIVE_NUMBER.test(arg)) return false;
  return !arg.includes(' ');
}

const display = (spec: OptionSpec): string => spec.flags.join('/');

function findOption(
  specs: readonly OptionSpec[],
  arg: string,
): { spec: OptionSpec; inline?: string } | { error: string } | undefined {
  const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
  const name = eq === -1 ? arg : arg.slice(0, eq);
  const inline = eq === -1 ? undefined : arg.slice(eq + 1);
  const exact = specs.find((s) => s.flags.includes(name));
  if (exact !== undefined) return inline === undefined ? { spec: exact } : { spec: exact, inline };
  if (name.startsWith('--')) {
    const matches = specs.flatMap((s) =>
      s.flags.filter((f) => f.startsWith('--') && f.startsWith(name)).map((f) => ({ s, f })),
    );
    if (matches.length > 1) {
      return { error: `ambiguous option: ${name} could match ${matches.map((m) => m.f).join(', ')}` };
    }
    const only = matches[0];
    if (only !== undefined) return inline === undefined ? { spec: only.s } : { spec: only.s, inline };
    return undefined;
  }
  // `-ovalue`: a short flag with its value attached.
  const short = specs.find((s) => s.flags.includes(arg.slice(0, 2)) && s.nargs === 1);
  return short === undefined ? undefined : { spec: short, inline: arg.slice(2) };
}

/**
 * Parses `argv` against the options and positionals of one command. `-h`/`--help` anywhere (before
 * `--`) sets `isHelp`. Errors, in argparse's order: a bad or missing option value as it is met, then
 * missing required arguments; unclaimed arguments are returned in `extras` for the caller to report.
 */
export function parseArgs(
  argv: readonly string[],
  options: readonly OptionSpec[],
  positionals: readonly PositionalSpec[],
): ParseOutcome {
  const values = new Map<string, string | readonly string[]>();
  const loose: string[] = [];
  const extras: string[] = [];
  let isHelp = false;
  let isOptionsEnd = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (isOptionsEnd || !looksLikeOption(arg)) {
      loose.push(arg);
      continue;
    }
    if (arg === '--') {
      isOptionsEnd = true;
      continue;
    }
    if (arg === '-h' || arg === '--help') {
      isHelp = true;
      continue;
    }
    const found = findOption(options, arg);
    if (found === undefined) {
      extras.push(arg);
      continue;
    }
    if ('error' in found) return { ok: false, error: found.error };
    const { spec } = found;
    const taken: string[] = [];
    if (found.inline !== undefined) taken.push(found.inline);
    else if (spec.nargs === 1) {
      const next = argv[i + 1];
      if (next === undefined || looksLikeOption(next)) {
        return { ok: false, error: `argument ${display(spec)}: expected one argument` };
      }
      taken.push(next);
      i++;
    } else {
      while (i + 1 < argv.length && !looksLikeOption(argv[i + 1] ?? '')) taken.push(argv[++i] ?? '');
      if (spec.nargs === '+' && taken.length === 0) {
        return { ok: false, error: `argument ${display(spec)}: expected at least one argument` };
      }
    }
    for (const value of taken) {
      const problem = spec.check?.(value);
      if (problem !== undefined) return { ok: false, error: `argument ${display(spec)}: ${problem}` };
    }
    values.set(spec.dest, spec.nargs === 1 ? (taken[0] ?? '') : taken);
  }
  if (isHelp) return { ok: true, args: { values, isHelp, extras } };
  positionals.forEach((p, index) => {
    const value = loose[index];
    if (value !== undefined) values.set(p.dest, value);
  });
  for (const p of positionals) {
    const value = values.get(p.dest);
    const problem = typeof value === 'string' ? p.check?.(value) : undefined;
    if (problem !== undefined) return { ok: false, error: `argument ${p.dest}: ${problem}` };
  }
  const missing = [
    ...options
      .filter((o) => o.isRequired === true && !values.has(o.dest))
      .map((o) => o.flags.at(-1) ?? o.dest),
    ...positionals.filter((p) => !values.has(p.dest)).map((p) => p.dest),
  ];
  if (missing.length > 0)
    return { ok: false, error: `the following arguments are required: ${missing.join(', ')}` };
  extras.push(...loose.slice(positionals.length));
  return { ok: true, args: { values, isHelp, extras } };
}

/** argparse's usage fragment for one option: `--from FROM`, `[--cc [CC ...]]`, `--to TO [TO ...]`. */
export function usageOf(spec: OptionSpec): string {
  const flag = spec.flags.at(-1) ?? '';
  const meta = spec.metavar ?? spec.dest.toUpperCase();
  const body =
    spec.nargs === 1
      ? `${flag} ${meta}`
      : spec.nargs === '+'
        ? `${flag} ${meta} [${meta} ...]`
        : `${flag} [${meta} ...]`;
  const short = spec.flags.length > 1 ? `${spec.flags[0] ?? ''} ${spec.nargs === 1 ? meta : '...'}` : body;
  return spec.isRequired === true ? body : `[${spec.flags.length > 1 ? short : body}]`;
}
