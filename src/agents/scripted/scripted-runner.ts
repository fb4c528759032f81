import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSystemClock } from '../../core/clock.js';
import { createDeadlineSignal } from '../../core/deadline-signal.js';
import { MusubiError } from '../../core/errors.js';
import { shellQuote } from '../../core/shell-quote.js';
import type {
  AgentAvailability,
  AgentRunEvent,
  AgentRunInput,
  AgentRunner,
  AgentRunResult,
} from '../agent-runner.js';
import { toolEvent, toolResultEvent, type ToolCall } from '../cli/tool-event.js';
import { ChildReaper } from '../process/child-reaper.js';
import { buildChildEnv } from '../process/child-env.js';
import { DEFAULT_OUTPUT_CAP_BYTES } from '../process/output-capture.js';
import { resolveExecutable } from '../process/resolve-executable.js';
import { runProcess } from '../process/run-process.js';
import { structuredNekoReply } from './assessment-reply.js';
import { decompositionReply, isDecompositionRequest } from './decomposition-reply.js';
import { planIgniteTurn } from './ignite-delivery.js';
import { resolveInsideCwd } from './safe-path.js';
import { parseScript, type ScriptInstruction } from './script-parser.js';

/** Options of {@link ScriptedRunner}. */
export interface ScriptedRunnerOptions {
  /** The environment `run` instructions pick from through the allowlist. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** More names (or `PREFIX_*`) `run` commands inherit. */
  readonly passEnv?: readonly string[];
  readonly reaper?: ChildReaper;
  readonly outputCapBytes?: number;
  readonly graceMs?: number;
}

/** Where a turn stands while instructions run. */
interface TurnState {
  readonly parts: string[];
  readonly actions: string[];
  exitCode: number;
  isFailed: boolean;
}

/** What a file or process step did, for its `tool_result` event. */
interface StepOutcome {
  readonly output: string;
  readonly isError: boolean;
}

/** A step as a tool call for its `tool` event; undefined for steps that are none (reply, fail, sleep). */
function toolCallOf(step: ScriptInstruction, callId: string): ToolCall | undefined {
  switch (step.op) {
    case 'write':
    case 'append':
      return { name: step.op, kind: 'edit', callId, args: { path: step.path, content: step.content } };
    case 'mkdir':
      return { name: step.op, kind: 'edit', callId, args: { path: step.path } };
    case 'read':
      return { name: step.op, kind: 'read', callId, args: { path: step.path } };
    case 'run':
      return {
        name: step.op,
        kind: 'command',
        callId,
        args: { argv: step.argv },
        summary: step.argv.map(shellQuote).join(' '),
      };
    default:
      return undefined;
  }
}

function errorText(err: unknown): string {
  return err instanceof MusubiError ? `${err.code}: ${err.message}` : String(err);
}

function emit(input: AgentRunInput, event: AgentRunEvent): void {
  try {
    input.onEvent?.(event);
  } catch {
    // onEvent must not throw (AgentRunInput contract); a faulty listener never breaks the run.
  }
}

/**
 * The built-in scripted agent: no LLM, real file and process actions from the instruction language
 * of docs/agents.md, and fixed-rule JSON answers to yadon decomposition and N.E.K.O. assessment
 * requests. Paths stay inside cwd; `run` uses argv (no shell), the allowlisted environment and the same
 * stop ladder as the CLI backends.
 *
 * `run` rejects before any action with SCRIPT_INVALID (malformed instruction), PATH_OUTSIDE_CWD (a path
 * leaving cwd, also through `..` or a symlink) or AGENT_FAILED (cwd missing); everything else resolves.
 * A step after `try` is checked only when it runs: its failure (PATH_OUTSIDE_CWD included) is reported as
 * a failed tool call (`tool_result` with `isError`) and the script goes on, its exit code untouched.
 */
export class ScriptedRunner implements AgentRunner {
  readonly backend = 'scripted' as const;
  readonly #options: ScriptedRunnerOptions;
  readonly #reaper: ChildReaper;
  readonly #clock = createSystemClock();

  constructor(options: ScriptedRunnerOptions) {
    this.#options = options;
    this.#reaper = options.reaper ?? new ChildReaper();
  }

  available(): Promise<AgentAvailability> {
    return Promise.resolve({ ready: true, reasons: [], version: 'built-in' });
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const startedAt = performance.now();
    const info = await stat(input.cwd).catch(() => null);
    if (info?.isDirectory() !== true) {
      throw new MusubiError('AGENT_FAILED', `scripted agent: working directory ${input.cwd} does not exist`);
    }
    const prompt = input.systemPrompt ? `${input.systemPrompt}\n\n${input.prompt}` : input.prompt;
    const ignite = await planIgniteTurn(input);
    const structured =
      ignite !== undefined
        ? undefined
        : isDecompositionRequest(prompt)
          ? decompositionReply(prompt)
          : structuredNekoReply(prompt);
    const script = ignite?.script ?? (structured === undefined ? parseScript(input.prompt) : []);
    // A tried step's path is checked when it runs: leaving cwd is then its failed (refused) tool call.
    for (const step of script)
      if ('path' in step && step.isTried !== true) await resolveInsideCwd(input.cwd, step.path);

    emit(input, { type: 'started', pid: null, argv: ['scripted'] });
    const state: TurnState = {
      parts: structured === undefined ? [] : [structured],
      actions: [],
      exitCode: 0,
      isFailed: false,
    };
    using deadline = createDeadlineSignal({
      signals: input.signal === undefined ? [] : [input.signal],
      timeoutMs: input.timeoutMs,
      clock: this.#clock,
    });
    const { signal } = deadline;
    for (const [index, step] of script.entries()) {
      if (signal.aborted || state.isFailed) break;
      const call = toolCallOf(step, `step-${index + 1}`);
      if (call !== undefined) emit(input, toolEvent(call));
      const outcome = await this.#step(step, input, signal, state).catch((err: unknown): StepOutcome => {
        const output = errorText(err);
        if (step.isTried === true) state.actions.push(`${step.op} failed (${output})`);
        else if (!signal.aborted) {
          state.isFailed = true;
          state.exitCode = 1;
          state.parts.push(output);
        }
        return { output, isError: true };
      });
      if (call !== undefined && outcome !== undefined)
        emit(input, toolResultEvent({ ...outcome, callId: call.callId }));
    }
    if (ignite !== undefined && !state.isFailed && !signal.aborted) await ignite.finish();
    const timedOut = signal.aborted && input.signal?.aborted !== true;
    const canceled = input.signal?.aborted === true;
    if (timedOut || canceled) emit(input, { type: 'stopping', reason: timedOut ? 'timeout' : 'cancel' });
    const text = state.parts.length > 0 ? state.parts.join('\n') : summary(state.actions);
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    emit(input, { type: 'usage', usage });
    return {
      backend: 'scripted',
      text,
      exitCode: timedOut || canceled ? null : state.exitCode,
      signal: null,
      isError: timedOut || canceled || state.exitCode !== 0,
      timedOut,
      canceled,
      sessionId: input.sessionId ?? `scripted-${randomUUID()}`,
      usage,
      durationMs: Math.round(performance.now() - startedAt),
      stderrTail: '',
      isOutputTruncated: false,
    };
  }

  async #step(
    step: ScriptInstruction,
    input: AgentRunInput,
    signal: AbortSignal,
    state: TurnState,
  ): Promise<StepOutcome | undefined> {
    switch (step.op) {
      case 'write':
      case 'append': {
        const path = await resolveInsideCwd(input.cwd, step.path);
        await mkdir(dirname(path), { recursive: true });
        await (step.op === 'write' ? writeFile : appendFile)(path, step.content);
        const action = `${step.op === 'write' ? 'wrote' : 'appended to'} ${step.path} (${Buffer.byteLength(step.content)} bytes)`;
        state.actions.push(action);
        return { output: action, isError: false };
      }
      case 'mkdir': {
        await mkdir(await resolveInsideCwd(input.cwd, step.path), { recursive: true });
        const action = `created ${step.path}/`;
        state.actions.push(action);
        return { output: action, isError: false };
      }
      case 'read': {
        const text = await readFile(await resolveInsideCwd(input.cwd, step.path), 'utf8');
        const part = text
          .slice(0, this.#options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES)
          .replace(/\n$/, '');
        state.parts.push(part);
        return { output: part, isError: false };
      }
      case 'reply':
        state.parts.push(step.text);
        emit(input, { type: 'message', text: step.text });
        return undefined;
      case 'fail':
        state.parts.push(step.text);
        state.exitCode = 1;
        state.isFailed = true;
        return undefined;
      case 'sleep':
        await sleep(step.ms, undefined, { signal }).catch(() => undefined);
        return undefined;
      case 'run':
        return this.#runCommand(step, input, signal, state);
    }
  }

  async #runCommand(
    step: Extract<ScriptInstruction, { op: 'run' }>,
    input: AgentRunInput,
    signal: AbortSignal,
    state: TurnState,
  ): Promise<StepOutcome> {
    const [command = '', ...args] = step.argv;
    const env = buildChildEnv({
      source: this.#options.env,
      ...(this.#options.passEnv && { allow: this.#options.passEnv }),
      ...(this.#options.extraEnv && { add: this.#options.extraEnv }),
    });
    const file = await resolveExecutable(command, env['PATH'], input.cwd);
    if (file === null) throw new MusubiError('AGENT_NOT_FOUND', `command '${command}' not found on PATH`);
    const proc = await runProcess({
      file,
      displayName: command,
      args,
      cwd: input.cwd,
      env,
      // The turn's own deadline is in `signal`; this only bounds a single command by it.
      timeoutMs: Math.max(0, input.timeoutMs),
      signal,
      reaper: this.#reaper,
      ...(this.#options.outputCapBytes !== undefined && { outputCapBytes: this.#options.outputCapBytes }),
      ...(this.#options.graceMs !== undefined && { graceMs: this.#options.graceMs }),
      onLine: (stream, line) => emit(input, { type: 'line', stream, line }),
    });
    const output = (proc.stdout + proc.stderr).replace(/\n$/, '');
    if (output !== '') state.parts.push(output);
    const action = `ran ${command} (exit ${proc.exitCode ?? proc.signal})`;
    state.actions.push(action);
    if (proc.exitCode !== 0 && !signal.aborted && step.isTried !== true) {
      state.exitCode = proc.exitCode ?? 1;
      state.isFailed = true;
    }
    return { output: output === '' ? action : output, isError: proc.exitCode !== 0 };
  }
}

function summary(actions: readonly string[]): string {
  return actions.length === 0
    ? 'scripted: no instructions found; nothing done'
    : `scripted: ${actions.join('; ')}`;
}
