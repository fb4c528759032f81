import { ChildReaper } from '../agents/process/child-reaper.js';
import { runProcess } from '../agents/process/run-process.js';
import { MusubiError } from '../core/errors.js';
import { splitShellWords } from '../core/shell-quote.js';

/** What the test gate found. */
export interface TestVerdict {
  readonly command: string;
  readonly exitCode: number;
  readonly passed: boolean;
  readonly outputTail: string;
}

const TAIL_BYTES = 8 * 1024;
const DEFAULT_TIMEOUT_MS = 30 * 60_000;

/**
 * `--test "<command>"` as an argument list: words split like a shell would, without a shell — no
 * expansion, no pipes. USAGE_INVALID for an empty command or an unterminated quote.
 */
export function testArgv(command: string): string[] {
  const split = splitShellWords(command);
  if (!split.ok) throw new MusubiError('USAGE_INVALID', `--test: ${split.problem}`);
  if (split.words.length === 0) throw new MusubiError('USAGE_INVALID', '--test: the command is empty');
  return split.words;
}

function tail(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= TAIL_BYTES ? text : `…${bytes.subarray(bytes.length - TAIL_BYTES).toString('utf8')}`;
}

/**
 * Runs the test command in `cwd` (the integrated tree) in its own process group, stdout and stderr
 * interleaved as they came; passed iff it exits 0. A command that cannot start fails the gate with
 * the reason as its output (exit code 127, like a shell).
 */
export async function runTestGate(options: {
  readonly command: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}): Promise<TestVerdict> {
  const [file, ...args] = testArgv(options.command);
  const lines: string[] = [];
  try {
    const result = await runProcess({
      file: file ?? '',
      displayName: file ?? '',
      args,
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      reaper: new ChildReaper(),
      onLine: (_stream, line) => void lines.push(line),
      ...(options.signal !== undefined && { signal: options.signal }),
    });
    const exitCode = result.exitCode ?? 1;
    const note = result.timedOut ? ['(the test command timed out)'] : [];
    return {
      command: options.command,
      exitCode,
      passed: exitCode === 0 && !result.timedOut && !result.canceled,
      outputTail: tail([...lines, ...note].join('\n')),
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { command: options.command, exitCode: 127, passed: false, outputTail: message };
  }
}
