/**
 * The AgentRunner port: run one agent turn (one CLI invocation or one scripted run) and report it in one
 * result shape for every outcome. Teams and gateways depend on this file only; concrete runners are
 * built by hub/ (see `create-agent-runner.ts`).
 */

/** The backends musubi can drive. `scripted` is built in and needs no binary. */
export const AGENT_BACKENDS = ['claude', 'codex', 'gemini', 'copilot', 'opencode', 'scripted'] as const;

/** One backend name. */
export type AgentBackend = (typeof AGENT_BACKENDS)[number];

/** True when `name` is one of {@link AGENT_BACKENDS}. */
export function isAgentBackend(name: string): name is AgentBackend {
  return (AGENT_BACKENDS as readonly string[]).includes(name);
}

/** Tokens and cost of one turn, as far as the CLI reports them (0 when it reports nothing). */
export interface AgentUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/**
 * Progress of a running turn, delivered to `onEvent` in order as it happens. `line` events carry raw
 * output lines (each at most the output cap); `message` events carry text the backend recognised as the
 * agent speaking (an assistant message in a JSON stream).
 */
export type AgentRunEvent =
  | { readonly type: 'started'; readonly pid: number | null; readonly argv: readonly string[] }
  | { readonly type: 'line'; readonly stream: 'stdout' | 'stderr'; readonly line: string }
  | { readonly type: 'message'; readonly text: string }
  | { readonly type: 'session'; readonly sessionId: string }
  | { readonly type: 'stopping'; readonly reason: 'timeout' | 'cancel' };

/** One turn for an agent. */
export interface AgentRunInput {
  readonly prompt: string;
  /** Working directory of the turn; must exist. */
  readonly cwd: string;
  /** A session id from an earlier turn's result: the CLI resumes that conversation. */
  readonly sessionId?: string;
  /** Overrides the runner's configured model for this turn. */
  readonly model?: string;
  /** Appended to the CLI's own system prompt where the CLI supports it (claude); prepended to the prompt otherwise. */
  readonly systemPrompt?: string;
  /** Hard limit for the turn; the process tree is stopped when it passes. */
  readonly timeoutMs: number;
  /** Aborting stops the process tree the same way a timeout does. */
  readonly signal?: AbortSignal;
  /** Progress callback; must not throw (a throw is ignored). */
  readonly onEvent?: (event: AgentRunEvent) => void;
}

/**
 * The outcome of one turn. Every outcome of a started turn resolves this shape; callers branch on the
 * fields (`timedOut`, `canceled`, `isError`, `exitCode`), never on exception classes.
 */
export interface AgentRunResult {
  readonly backend: AgentBackend;
  /** The agent's final answer: parsed from the CLI's JSON, else the raw stdout. */
  readonly text: string;
  /** The process exit code; null when it ended by a signal. */
  readonly exitCode: number | null;
  /** The signal that ended the process, if any. */
  readonly signal: string | null;
  /** True when the turn failed: non-zero exit, a CLI-reported error (claude `is_error`), timeout, cancel. */
  readonly isError: boolean;
  readonly timedOut: boolean;
  readonly canceled: boolean;
  /** The session to pass as `sessionId` next turn, when the CLI reported one. */
  readonly sessionId?: string;
  readonly usage?: AgentUsage;
  readonly durationMs: number;
  /** The last few KiB of stderr, for diagnostics. */
  readonly stderrTail: string;
  /**
   * Why a failed turn failed, in the CLI's words: the error it reported (API error, auth problem), else
   * the most relevant stderr lines. Absent on success, timeout and cancel.
   */
  readonly errorMessage?: string;
  /** True when stdout or stderr went past the output cap (the rest was counted and dropped). */
  readonly isOutputTruncated: boolean;
}

/** Whether a backend can run here, and why not. */
export interface AgentAvailability {
  readonly ready: boolean;
  readonly reasons: readonly string[];
  /** The binary that would run, when found. */
  readonly path?: string;
  /** The first line of `<cli> --version`, when it answered. */
  readonly version?: string;
}

/**
 * Runs agent turns on one backend.
 *
 * `run` rejects only when no turn could start: `AGENT_NOT_FOUND` (binary not on PATH), `AGENT_FAILED`
 * (cwd missing, spawn failure), `BUDGET_EXCEEDED` (refused before any process starts). Everything after
 * the start — exit codes, timeouts, cancels, unparsable output — resolves an {@link AgentRunResult}.
 * A run never leaves a process of its tree behind.
 */
export interface AgentRunner {
  readonly backend: AgentBackend;
  run(input: AgentRunInput): Promise<AgentRunResult>;
  /** Probes the backend (binary on PATH, `--version`) without running a turn. Never rejects. */
  available(): Promise<AgentAvailability>;
}
