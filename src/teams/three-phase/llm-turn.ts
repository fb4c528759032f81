import type { AgentRunner } from '../../agents/agent-runner.js';
import { isMusubiError } from '../../core/errors.js';

/**
 * How one LLM turn ended, in yadon terms (spec yadon.md 4.5): `finished` with the output and exit code
 * (timeouts and spawn failures included, with their fixed texts), `crashed` when the agent process was
 * killed by a signal nobody in musubi sent (worth a retry), `canceled` when the caller aborted.
 */
export type LlmTurnOutcome =
  | {
      readonly kind: 'finished';
      readonly output: string;
      readonly exitCode: number;
      /** The run timed out or could not start: the turn "failed" (decomposition falls back). */
      readonly hasFailed: boolean;
    }
  | { readonly kind: 'crashed'; readonly reason: string }
  | { readonly kind: 'canceled' };

/** One turn's inputs. */
export interface LlmTurnInput {
  readonly prompt: string;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** `タイムアウト (<whole minutes>分)`, e.g. `タイムアウト (10分)` for 600 s. */
function timeoutText(timeoutMs: number): string {
  return `タイムアウト (${Math.floor(timeoutMs / 60_000)}分)`;
}

function errorText(err: unknown): string {
  if (isMusubiError(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one turn and maps it to yadon's result rules: output = the answer followed by stderr, exit code
 * 1 for CLI-reported errors; timeout → `タイムアウト (<m>分)`, code 1 (the runner has already stopped the
 * whole process tree); a turn that could not start → `実行エラー: <text>`, code 1. Never rejects.
 */
export async function runLlmTurn(runner: AgentRunner, input: LlmTurnInput): Promise<LlmTurnOutcome> {
  let result;
  try {
    result = await runner.run({
      prompt: input.prompt,
      cwd: input.cwd,
      timeoutMs: input.timeoutMs,
      ...(input.signal !== undefined && { signal: input.signal }),
    });
  } catch (err) {
    if (input.signal?.aborted === true) return { kind: 'canceled' };
    return { kind: 'finished', output: `実行エラー: ${errorText(err)}`, exitCode: 1, hasFailed: true };
  }
  if (result.canceled) return { kind: 'canceled' };
  if (result.timedOut) {
    return { kind: 'finished', output: timeoutText(input.timeoutMs), exitCode: 1, hasFailed: true };
  }
  if (result.signal !== null) return { kind: 'crashed', reason: `agent process killed by ${result.signal}` };
  const tail = result.stderrTail.replace(/\n$/, '');
  // The CLI's own error (an API message in its JSON output) is added when neither text nor stderr has it.
  const reported = result.errorMessage ?? '';
  const stderr =
    reported === '' || tail.includes(reported) || result.text.includes(reported)
      ? tail
      : tail === ''
        ? reported
        : `${tail}\n${reported}`;
  const output = stderr === '' ? result.text : result.text === '' ? stderr : `${result.text}\n${stderr}`;
  const exitCode = result.exitCode ?? 1;
  return {
    kind: 'finished',
    output,
    exitCode: exitCode === 0 && result.isError ? 1 : exitCode,
    hasFailed: false,
  };
}
