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
 * What a tool call does, as far as its name and arguments tell: runs a `command`, `edit`s (writes,
 * patches, creates) a file, `read`s one, `search`es (grep, glob, list), fetches from the `web`, or
 * something else (`other`, MCP tools included).
 */
export const TOOL_KINDS = ['command', 'edit', 'read', 'search', 'web', 'other'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/**
 * Progress of a running turn, delivered to `onEvent` in order as it happens. `line` events carry raw
 * output lines (each at most the output cap); the other kinds are what the backend recognised in the
 * CLI's JSON event stream:
 * - `message`: text of the agent speaking (an assistant message);
 * - `tool`: a tool call the agent made: `name` as the CLI reports it, `kind`, a one-line `summary` (the
 *   command line, the file path, the pattern) and `input`, the arguments as JSON text; `callId` pairs it
 *   with its `tool_result` when the CLI reports one;
 * - `tool_result`: what a tool call returned (`output`, possibly cut by the backend) and whether it failed;
 * - `usage`: tokens and cost so far, when the CLI reports them during the turn (cumulative for the turn);
 * - `error`: an error the CLI reported: a retried API error, a refused tool, or the error that ends the
 *   turn (which is also the result's `errorMessage`);
 * - `waiting`: the agent is waiting for a permission or an answer, with the `question` as the CLI words it.
 */
export type AgentRunEvent =
  | { readonly type: 'started'; readonly pid: number | null; readonly argv: readonly string[] }
  | { readonly type: 'line'; readonly stream: 'stdout' | 'stderr'; readonly line: string }
  | { readonly type: 'message'; readonly text: string }
  | {
      readonly type: 'tool';
      readonly callId?: string;
      readonly name: string;
      readonly kind: ToolKind;
      readonly summary: string;
      readonly input: string;
    }
  | {
      readonly type: 'tool_result';
      readonly callId?: string;
      readonly isError: boolean;
      readonly output: string;
    }
  | { readonly type: 'usage'; readonly usage: AgentUsage }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'waiting'; readonly question: string }
  | { readonly type: 'session'; readonly sessionId: string }
  | { readonly type: 'stopping'; readonly reason: 'timeout' | 'cancel' };

/** What a turn is part of, for its transcript and the timeline: the team, the run, the phase, the subtask. */
export interface TurnLabel {
  /** The name the turn is recorded under when one runner serves several roles (a run's `worker-2`). */
  readonly agent?: string;
  readonly team?: string;
  readonly run?: string;
  readonly phase?: string;
  readonly subtask?: string;
}

/** One turn for an agent. */
export interface AgentRunInput {
  readonly prompt: string;
  /** What the turn is part of; recorded with its transcript. */
  readonly label?: TurnLabel;
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
