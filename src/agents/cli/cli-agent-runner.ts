import { MusubiError } from '../../core/errors.js';
import type {
  AgentAvailability,
  AgentBackend,
  AgentRunEvent,
  AgentRunInput,
  AgentRunner,
  AgentRunResult,
} from '../agent-runner.js';
import { ChildReaper } from '../process/child-reaper.js';
import { buildChildEnv } from '../process/child-env.js';
import { resolveExecutable } from '../process/resolve-executable.js';
import { runProcess, type ProcessResult } from '../process/run-process.js';
import type { CliBackend, CliSettings, ParsedOutput } from './cli-backend.js';

const VERSION_TIMEOUT_MS = 10_000;

/** Options of {@link CliAgentRunner}. */
export interface CliAgentRunnerOptions {
  readonly backend: CliBackend;
  /** The environment the allowlist picks from (the daemon's, passed in by the composition root). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Explicit environment additions (config `agents.<name>.env`). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** The binary to run instead of `backend.command` (a name looked up on PATH, or a path). */
  readonly command?: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly settings?: CliSettings;
  /** Shared by the runners of one hub so one exit hook covers every live process group. */
  readonly reaper?: ChildReaper;
  readonly outputCapBytes?: number;
  readonly graceMs?: number;
}

function safeEmit(onEvent: AgentRunInput['onEvent'], event: AgentRunEvent): void {
  try {
    onEvent?.(event);
  } catch {
    // onEvent must not throw (AgentRunInput contract); a faulty listener never breaks the run.
  }
}

/**
 * Runs turns on one agent CLI (claude, codex, gemini, copilot, opencode) as described by a
 * {@link CliBackend}: argv from the backend, allowlisted environment, process handling from
 * `process/`, output parsed by the backend's parser with a raw-text fallback. See AgentRunner for the
 * contract; `run` rejects with AGENT_NOT_FOUND (`agent CLI '<name>' not found on PATH`) or AGENT_FAILED.
 */
export class CliAgentRunner implements AgentRunner {
  readonly backend: AgentBackend;
  readonly #options: CliAgentRunnerOptions;
  readonly #reaper: ChildReaper;

  constructor(options: CliAgentRunnerOptions) {
    this.backend = options.backend.name;
    this.#options = options;
    this.#reaper = options.reaper ?? new ChildReaper();
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const { backend } = this.#options;
    const env = this.#childEnv();
    const file = await this.#resolve(env, input.cwd);
    const model = input.model ?? this.#options.model;
    const systemPrompt = input.systemPrompt ?? this.#options.systemPrompt;
    const invocation = backend.buildInvocation({
      prompt: input.prompt,
      cwd: input.cwd,
      settings: this.#options.settings ?? {},
      ...(input.sessionId !== undefined && { sessionId: input.sessionId }),
      ...(model !== undefined && { model }),
      ...(systemPrompt !== undefined && { systemPrompt }),
    });
    const parser = backend.createParser();
    const onEvent = input.onEvent;
    const proc = await runProcess({
      file,
      displayName: backend.command,
      args: invocation.args,
      cwd: input.cwd,
      env,
      timeoutMs: input.timeoutMs,
      reaper: this.#reaper,
      ...(invocation.stdin !== undefined && { stdin: invocation.stdin }),
      ...(input.signal !== undefined && { signal: input.signal }),
      ...(this.#options.outputCapBytes !== undefined && { outputCapBytes: this.#options.outputCapBytes }),
      ...(this.#options.graceMs !== undefined && { graceMs: this.#options.graceMs }),
      onSpawn: (pid) =>
        safeEmit(onEvent, { type: 'started', pid, argv: [backend.command, ...invocation.args] }),
      onLine: (stream, line) => {
        safeEmit(onEvent, { type: 'line', stream, line });
        if (stream === 'stdout') for (const event of parser.onLine(line)) safeEmit(onEvent, event);
      },
    });
    if (proc.timedOut || proc.canceled)
      safeEmit(onEvent, { type: 'stopping', reason: proc.timedOut ? 'timeout' : 'cancel' });
    return toResult(this.backend, proc, parser.finish(proc.stdout));
  }

  async available(): Promise<AgentAvailability> {
    const env = this.#childEnv();
    const name = this.#options.command ?? this.#options.backend.command;
    const file = await resolveExecutable(name, env['PATH'], process.cwd());
    if (file === null) return { ready: false, reasons: [`agent CLI '${name}' not found on PATH`] };
    try {
      const proc = await runProcess({
        file,
        displayName: name,
        args: ['--version'],
        cwd: process.cwd(),
        env,
        timeoutMs: VERSION_TIMEOUT_MS,
        reaper: this.#reaper,
        graceMs: 1000,
      });
      const version = proc.stdout.trim().split('\n')[0]?.trim() ?? '';
      if (proc.exitCode !== 0) {
        const why = proc.timedOut ? 'timed out' : `exited with ${proc.exitCode ?? proc.signal}`;
        return { ready: false, path: file, reasons: [`'${name} --version' ${why}`] };
      }
      return { ready: true, path: file, reasons: [], ...(version !== '' && { version }) };
    } catch (err) {
      return { ready: false, path: file, reasons: [err instanceof Error ? err.message : String(err)] };
    }
  }

  #childEnv(): Record<string, string> {
    return buildChildEnv({
      source: this.#options.env,
      allow: this.#options.backend.authEnv,
      ...(this.#options.extraEnv !== undefined && { add: this.#options.extraEnv }),
    });
  }

  async #resolve(env: Record<string, string>, cwd: string): Promise<string> {
    const name = this.#options.command ?? this.#options.backend.command;
    const file = await resolveExecutable(name, env['PATH'], cwd);
    if (file === null) throw new MusubiError('AGENT_NOT_FOUND', `agent CLI '${name}' not found on PATH`);
    return file;
  }
}

function toResult(backend: AgentBackend, proc: ProcessResult, parsed: ParsedOutput | null): AgentRunResult {
  const text = parsed?.text ?? proc.stdout.replace(/\r?\n$/, '');
  const isError = proc.timedOut || proc.canceled || proc.exitCode !== 0 || (parsed?.isError ?? false);
  return {
    backend,
    text,
    exitCode: proc.exitCode,
    signal: proc.signal,
    isError,
    timedOut: proc.timedOut,
    canceled: proc.canceled,
    durationMs: Math.round(proc.durationMs),
    stderrTail: proc.stderrTail,
    isOutputTruncated: proc.isOutputTruncated,
    ...(parsed?.sessionId !== undefined && { sessionId: parsed.sessionId }),
    ...(parsed?.usage !== undefined && { usage: parsed.usage }),
  };
}
