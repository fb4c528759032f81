import { splitShellWords } from '../../core/shell-quote.js';
import { MusubiError } from '../../core/errors.js';

/**
 * One action of the scripted agent's instruction language (docs/agents.md). `isTried` marks a step
 * written after `try`: its failure is a failed tool call the script goes on past, as a real agent's
 * refused or failed tool call is, instead of the end of the turn.
 */
export type ScriptInstruction = ScriptStep & { readonly isTried?: boolean };

type ScriptStep =
  | {
      readonly op: 'write' | 'append';
      readonly path: string;
      readonly content: string;
      readonly line: number;
    }
  | { readonly op: 'mkdir' | 'read'; readonly path: string; readonly line: number }
  | { readonly op: 'run'; readonly argv: readonly string[]; readonly line: number }
  | { readonly op: 'reply' | 'fail'; readonly text: string; readonly line: number }
  | { readonly op: 'sleep'; readonly ms: number; readonly line: number };

/** The instructions `try` may precede: those that are tool calls. */
const TRIABLE = ['write', 'append', 'mkdir', 'read', 'run'];

/** The words that start an instruction line. Any other line is prose and ignored. */
export const SCRIPT_KEYWORDS = [
  'write',
  'append',
  'mkdir',
  'read',
  'run',
  'reply',
  'fail',
  'sleep',
  'try',
] as const;

const MAX_SLEEP_MS = 3_600_000;
const HEREDOC = /^<<-?\s*'?([A-Za-z_][A-Za-z0-9_]*)'?$/;

function invalid(line: number, message: string): MusubiError {
  return new MusubiError('SCRIPT_INVALID', `line ${line}: ${message}`, { details: { line } });
}

/** {@link splitShellWords}, its problems as SCRIPT_INVALID errors of `line`. */
export function splitWords(text: string, line: number): string[] {
  const split = splitShellWords(text);
  if (!split.ok) throw invalid(line, split.problem);
  return split.words;
}

/** Splits `<path> <rest…>` where the path may be quoted. */
function splitPath(rest: string, line: number): { path: string; tail: string } {
  const match = /^("(?:[^"\\]|\\.)*"|'[^']*'|\S+)\s?(.*)$/s.exec(rest);
  const path = match?.[1] === undefined ? undefined : splitWords(match[1], line)[0];
  if (path === undefined || path === '') throw invalid(line, 'missing path');
  return { path, tail: match?.[2] ?? '' };
}

/** Reads a here-doc body from `lines` starting after index `start`; returns the body and the end index. */
function readHeredoc(lines: readonly string[], start: number, tag: string): { body: string; end: number } {
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i]?.trim() === tag) return { body: lines.slice(start + 1, i).join('\n') + '\n', end: i };
  }
  throw invalid(start + 1, `here-doc <<${tag} is not closed by a line '${tag}'`);
}

/**
 * Parses the scripted agent's instructions out of a prompt. A line is an instruction when its first
 * word is one of {@link SCRIPT_KEYWORDS} (`try` only before a tool call: write, append, mkdir, read,
 * run); every other line is prose and skipped. Throws
 * SCRIPT_INVALID (with the 1-based line) for a malformed instruction.
 */
export function parseScript(prompt: string): ScriptInstruction[] {
  const lines = prompt.split(/\r?\n/);
  const out: ScriptInstruction[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const tried = /^\s*try(?:\s+(.*))?$/s.exec(lines[i] ?? '');
    const raw = tried === null ? (lines[i] ?? '') : (tried[1] ?? '');
    const m = /^\s*([a-z]+)(?:\s+(.*))?$/s.exec(raw);
    const keyword = m?.[1];
    // `try` before anything but a tool call is prose ("try to keep it short"), like any other line.
    if (tried !== null && (keyword === undefined || !TRIABLE.includes(keyword))) continue;
    if (keyword === undefined || !(SCRIPT_KEYWORDS as readonly string[]).includes(keyword)) continue;
    const rest = (m?.[2] ?? '').trim();
    const count = out.length;
    switch (keyword) {
      case 'write':
      case 'append': {
        const { path, tail } = splitPath(rest, line);
        const heredoc = HEREDOC.exec(tail.trim());
        if (heredoc?.[1] !== undefined) {
          const { body, end } = readHeredoc(lines, i, heredoc[1]);
          out.push({ op: keyword, path, content: body, line });
          i = end;
        } else out.push({ op: keyword, path, content: tail === '' ? '' : `${tail}\n`, line });
        break;
      }
      case 'mkdir':
      case 'read':
        out.push({ op: keyword, path: splitPath(rest, line).path, line });
        break;
      case 'run': {
        const argv = splitWords(rest, line);
        if (argv.length === 0) throw invalid(line, 'run needs a command');
        out.push({ op: 'run', argv, line });
        break;
      }
      case 'reply':
      case 'fail': {
        const heredoc = HEREDOC.exec(rest);
        if (heredoc?.[1] !== undefined) {
          const { body, end } = readHeredoc(lines, i, heredoc[1]);
          out.push({ op: keyword, text: body.replace(/\n$/, ''), line });
          i = end;
        } else out.push({ op: keyword, text: rest, line });
        break;
      }
      case 'sleep': {
        if (!/^\d+$/.test(rest) || Number(rest) > MAX_SLEEP_MS) {
          throw invalid(line, `sleep needs milliseconds (0..${MAX_SLEEP_MS}), got '${rest}'`);
        }
        out.push({ op: 'sleep', ms: Number(rest), line });
        break;
      }
    }
    const step = out[count];
    if (tried !== null && step !== undefined) out[count] = { ...step, isTried: true };
  }
  return out;
}
