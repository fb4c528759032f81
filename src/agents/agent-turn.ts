import { isMusubiError } from '../core/errors.js';
import type { AgentRunInput, AgentRunner, AgentUsage, TurnLabel } from './agent-runner.js';

/**
 * How one agent turn ended, as a team sees it: `finished` with the output and exit code (timeouts and
 * spawn failures included, with their texts), `crashed` when the agent process was killed by a signal
 * nobody in musubi sent (worth a retry), `canceled` when the caller aborted.
 */
export type TurnOutcome =
  | {
      readonly kind: 'finished';
      readonly output: string;
      readonly exitCode: number;
      /** The run timed out or could not start: the turn "failed" (a plan falls back, say). */
      readonly hasFailed: boolean;
      /** Tokens and cost, when the agent reported them. */
      readonly usage?: AgentUsage;
    }
  | { readonly kind: 'crashed'; readonly reason: string }
  | { readonly kind: 'canceled' };

/** One turn's inputs. */
export interface TurnRequest {
  readonly prompt: string;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** What the turn is part of (phase, subtask), for its transcript. */
  readonly label?: TurnLabel;
  /** The turn's progress events, as the runner delivers them. */
  readonly onEvent?: AgentRunInput['onEvent'];
}

/**
 * The agent-turn port teams are written against: run one prompt on one agent and say how it ended.
 * Never rejects. {@link runnerTurn} makes one from an {@link AgentRunner}; `musubi run` wraps that with
 * its worktree and transcript bookkeeping.
 */
export type AgentTurn = (request: TurnRequest) => Promise<TurnOutcome>;

/** The texts a failed turn's output reads; each gateway speaks its own wire's wording. */
export interface TurnTexts {
  readonly timedOut: (timeoutMs: number) => string;
  readonly couldNotStart: (error: string) => string;
}

/** Plain English texts, for turns no wire prescribes. */
export const ENGLISH_TURN_TEXTS: TurnTexts = {
  timedOut: (timeoutMs) => `timed out after ${Math.round(timeoutMs / 1000)} s`,
  couldNotStart: (error) => `the agent could not start: ${error}`,
};

function errorText(err: unknown): string {
  if (isMusubiError(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one turn on `runner`: output = the answer followed by stderr (and the CLI's own error when
 * neither has it), exit code 1 for CLI-reported errors; a timeout reads `texts.timedOut`, code 1 (the
 * runner has already stopped the whole process tree); a turn that could not start reads
 * `texts.couldNotStart`, code 1. Never rejects.
 */
export async function runTurn(
  runner: AgentRunner,
  input: TurnRequest,
  texts: TurnTexts = ENGLISH_TURN_TEXTS,
): Promise<TurnOutcome> {
  let result;
  try {
    result = await runner.run({
      prompt: input.prompt,
      cwd: input.cwd,
      timeoutMs: input.timeoutMs,
      ...(input.signal !== undefined && { signal: input.signal }),
      ...(input.label !== undefined && { label: input.label }),
      ...(input.onEvent !== undefined && { onEvent: input.onEvent }),
    });
  } catch (err) {
    if (input.signal?.aborted === true) return { kind: 'canceled' };
    return { kind: 'finished', output: texts.couldNotStart(errorText(err)), exitCode: 1, hasFailed: true };
  }
  if (result.canceled) return { kind: 'canceled' };
  if (result.timedOut) {
    return { kind: 'finished', output: texts.timedOut(input.timeoutMs), exitCode: 1, hasFailed: true };
  }
  if (result.signal !== null) return { kind: 'crashed', reason: `agent process killed by ${result.signal}` };
  const tail = result.stderrTail.replace(/\n$/, '');
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
    ...(result.usage !== undefined && { usage: result.usage }),
  };
}

/** The {@link AgentTurn} of one runner, its failures worded by `texts`. */
export function runnerTurn(runner: AgentRunner, texts: TurnTexts = ENGLISH_TURN_TEXTS): AgentTurn {
  return (request) => runTurn(runner, request, texts);
}
