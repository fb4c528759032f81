import { MusubiError } from '../../core/errors.js';

/** One action of the scripted agent's instruction language (docs/agents.md). */
export type ScriptInstruction =
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

/** The words that start an instruction line. Any other line is prose and ignored. */
export const SCRIPT_KEYWORDS = ['write', 'append', 'mkdir', 'read', 'run', 'reply', 'fail', 'sleep'] as const;

const MAX_SLEEP_MS = 3_600_000;
const HEREDOC = /^<<-?\s*'?([A-Za-z_][A-Za-z0-9_]*)'?$/;

function invalid(line: number, message: string): MusubiError {
  return new MusubiError('SCRIPT_INVALID', `line ${line}: ${message}`, { details: { line } });
}

/**
 * Splits `text` into words like a shell would, without any expansion: whitespace separates, '…' is
 * literal, "…" allows \" and \\ escapes, a backslash outside quotes escapes the next character.
 */
export function splitWords(text: string, line: number): string[] {
  const words: string[] = [];
  let word = '';
  let hasWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw invalid(line, 'unterminated single quote');
      word += text.slice(i + 1, end);
      hasWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text.charAt(j) !== '"'; j++) {
        if (text.charAt(j) === '\\' && (text.charAt(j + 1) === '"' || text.charAt(j + 1) === '\\')) j++;
        word += text.charAt(j);
      }
      if (j >= text.length) throw invalid(line, 'unterminated double quote');
      hasWord = true;
      i = j;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text.charAt(++i);
      hasWord = true;
    } else if (/\s/.test(c)) {
      if (hasWord) words.push(word);
      word = '';
      hasWord = false;
    } else {
      word += c;
      hasWord = true;
    }
  }
  if (hasWord) words.push(word);
  return words;
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
 * word is one of {@link SCRIPT_KEYWORDS}; every other line is prose and skipped. Throws
 * SCRIPT_INVALID (with the 1-based line) for a malformed instruction.
 */
export function parseScript(prompt: string): ScriptInstruction[] {
  const lines = prompt.split(/\r?\n/);
  const out: ScriptInstruction[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const line = i + 1;
    const m = /^\s*([a-z]+)(?:\s+(.*))?$/s.exec(raw);
    const keyword = m?.[1];
    if (keyword === undefined || !(SCRIPT_KEYWORDS as readonly string[]).includes(keyword)) continue;
    const rest = (m?.[2] ?? '').trim();
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
  }
  return out;
}
