/**
 * The shape of an argparse command line as the IGNITE mime tool's original declared it: parsers with
 * options, positionals and subcommands. `argparse-lite.ts` parses argv against it as Python 3.11 would;
 * `argparse-text.ts` prints its usage lines.
 */

/** One option of a (sub)command; `-h/--help` is added to every parser, as argparse's `add_help`. */
export interface OptionSpec {
  /** Flags as written, e.g. `['-o', '--output']`; usage lines show the first. */
  readonly flags: readonly string[];
  readonly dest: string;
  readonly nargs: 1 | '+' | '*';
  readonly isRequired?: boolean;
  /** Checks one value (argparse's `type=`); returns an error text (`argument X: <text>`) or undefined. */
  readonly check?: (value: string) => string | undefined;
  readonly help?: string;
}

/** One positional argument (nargs 1, so always required). */
export interface PositionalSpec {
  readonly dest: string;
  readonly check?: (value: string) => string | undefined;
  readonly help?: string;
}

/** One parser: argparse's ArgumentParser with its options, then its positionals, then its subcommands. */
export interface ParserSpec {
  readonly prog: string;
  readonly help?: string;
  readonly options: readonly OptionSpec[];
  readonly positionals: readonly PositionalSpec[];
  /** A required `add_subparsers(dest=…)`: the subcommand's name goes to `dest`, its values beside it. */
  readonly subcommands?: { readonly dest: string; readonly parsers: readonly ParserSpec[] };
}

/** A parsed value: a string for nargs 1, a list otherwise (and for a nargs-1 value that was only `--`). */
export type ArgValue = string | readonly string[];
