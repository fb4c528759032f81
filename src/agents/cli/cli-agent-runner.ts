import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MusubiError } from '../../core/errors.js';
import type {
  AgentAvailability,
  AgentBackend,
  AgentRunEvent,
  AgentRunInput,
  AgentRunner,
  AgentRunResult,
  AgentUsage,
} from '../agent-runner.js';
import { ChildReaper } from '../process/child-reaper.js';
import { buildChildEnv } from '../process/child-env.js';
import { resolveExecutable } from '../process/resolve-executable.js';
import { runProcess, type ProcessResult } from '../process/run-process.js';
import type { CliBackend, CliSettings, ParsedOutput, SessionMemory } from './cli-backend.js';
import { summarizeStderr } from './stderr-summary.js';

const VERSION_TIMEOUT_MS = 10_000;
const MAX_REMEMBERED_SESSIONS = 1000;

/** Options of {@link CliAgentRunner}. */
export interface CliAgentRunnerOptions {
  readonly backend: CliBackend;
  /** The environment the allowlist picks from (the daemon's, passed in by the composition root). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Explicit environment additions (config `agents.<name>.env`). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** More names (a trailing `*` is a prefix) to inherit from `env` (config `passEnv`). */
  readonly passEnv?: readonly string[];
  /** The binary to run instead of `backend.command` (a name looked up on PATH, or a path). */
  readonly command?: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly settings?: CliSettings;
  /** Shared by the runners of one hub so one exit hook covers every live process group. */
  readonly reaper?: ChildReaper;
  readonly outputCapBytes?: number;
  readonly graceMs?: number;
  /** Run the CLI as this user (config `agents.<name>.runAs`); needs musubi to run as root. */
  readonly runAs?: { readonly uid: number; readonly gid: number };
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
 * `process/`, output parsed by the backend's parser with a raw-text fallback. Events: `started`, each
 * `line` followed by the parser's events for it, `stopping`, and last a `usage` with the turn's final
 * usage when the parser found one the stream had not reported yet. See AgentRunner for the
 * contract; `run` rejects with AGENT_NOT_FOUND (`agent CLI '<name>' not found on PATH`) or AGENT_FAILED.
 */
export class CliAgentRunner implements AgentRunner {
  readonly backend: AgentBackend;
  readonly #options: CliAgentRunnerOptions;
  readonly #reaper: ChildReaper;
  readonly #memory: SessionMemory = createSessionMemory();

  constructor(options: CliAgentRunnerOptions) {
    this.backend = options.backend.name;
    this.#options = options;
    this.#reaper = options.reaper ?? new ChildReaper();
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const env = this.#childEnv();
    const file = await this.#resolve(env, input.cwd);
    // A private folder per turn for files the CLI writes beside its output; removed whatever happens.
    const scratchDir = await mkdtemp(join(tmpdir(), `musubi-${this.backend}-`));
    try {
      const owner = this.#options.runAs;
      if (owner !== undefined) await chown(scratchDir, owner.uid, owner.gid);
      return await this.#runIn(input, env, file, scratchDir);
    } finally {
      await rm(scratchDir, { recursive: true, force: true });
    }
  }

  async #runIn(
    input: AgentRunInput,
    env: Record<string, string>,
    file: string,
    scratchDir: string,
  ): Promise<AgentRunResult> {
    const { backend } = this.#options;
    const model = input.model ?? this.#options.model;
    const systemPrompt = input.systemPrompt ?? this.#options.systemPrompt;
    const turn = {
      prompt: input.prompt,
      cwd: input.cwd,
      scratchDir,
      childEnv: env,
      isRoot: this.#options.runAs === undefined ? process.getuid?.() === 0 : this.#options.runAs.uid === 0,
      settings: this.#options.settings ?? {},
      ...(input.sessionId !== undefined && { sessionId: input.sessionId }),
      ...(model !== undefined && { model }),
      ...(systemPrompt !== undefined && { systemPrompt }),
    };
    const invocation = backend.buildInvocation(turn);
    const parser = backend.createParser({ turn, memory: this.#memory });
    const onEvent = input.onEvent;
    let lastUsage: AgentUsage | undefined;
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
      ...(this.#options.runAs !== undefined && { runAs: this.#options.runAs }),
      onSpawn: (pid) =>
        safeEmit(onEvent, { type: 'started', pid, argv: [backend.command, ...invocation.args] }),
      onLine: (stream, line) => {
        safeEmit(onEvent, { type: 'line', stream, line });
        for (const event of parser.onLine(line, stream)) {
          if (event.type === 'usage') lastUsage = event.usage;
          safeEmit(onEvent, event);
        }
      },
    });
    if (proc.timedOut || proc.canceled)
      safeEmit(onEvent, { type: 'stopping', reason: proc.timedOut ? 'timeout' : 'cancel' });
    const parsed = parser.finish({ stdout: proc.stdout, stderr: proc.stderr, exitCode: proc.exitCode });
    // The turn's final usage (with the cost claude reports only at the end, copilot's from its usage
    // file) unless the stream already said exactly that.
    if (parsed?.usage !== undefined && !isSameUsage(parsed.usage, lastUsage))
      safeEmit(onEvent, { type: 'usage', usage: parsed.usage });
    return toResult(this.backend, proc, parsed);
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
      allow: [
        ...this.#options.backend.authEnv,
        ...(this.#options.backend.authEnvFrom?.(this.#options.env) ?? []),
        ...(this.#options.passEnv ?? []),
      ],
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

function isSameUsage(a: AgentUsage, b: AgentUsage | undefined): boolean {
  return (
    b !== undefined &&
    a.inputTokens === b.inputTokens &&
    a.outputTokens === b.outputTokens &&
    a.costUsd === b.costUsd
  );
}

function createSessionMemory(): SessionMemory {
  const values = new Map<string, unknown>();
  return {
    get: (sessionId) => values.get(sessionId),
    set: (sessionId, value) => {
      values.delete(sessionId);
      values.set(sessionId, value);
      // Bounded: a long-lived hub runs many sessions; the oldest are forgotten first.
      if (values.size > MAX_REMEMBERED_SESSIONS) values.delete(values.keys().next().value ?? '');
    },
  };
}

function toResult(backend: AgentBackend, proc: ProcessResult, parsed: ParsedOutput | null): AgentRunResult {
  const text = parsed?.text ?? proc.stdout.replace(/\r?\n$/, '');
  const isError = proc.timedOut || proc.canceled || proc.exitCode !== 0 || (parsed?.isError ?? false);
  const errorMessage = !isError
    ? undefined
    : proc.timedOut || proc.canceled
      ? undefined
      : (parsed?.errorMessage ?? summarizeStderr(proc.stderr));
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
    ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
  };
}
