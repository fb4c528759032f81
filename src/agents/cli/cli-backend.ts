import type { AgentBackend, AgentRunEvent, AgentUsage } from '../agent-runner.js';

/** Per-agent CLI settings from config (`agents.<name>`), interpreted by each backend; see docs/agents.md. */
export interface CliSettings {
  readonly permissionMode?: string;
  readonly sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access';
  readonly maxTurns?: number;
  /** Per-run cost ceiling the CLI can enforce itself (claude `--max-budget-usd`). */
  readonly maxBudgetUsd?: number;
}

/** Everything a backend needs to build one invocation. */
export interface CliTurn {
  readonly prompt: string;
  readonly cwd: string;
  /**
   * A private folder (0700) the runner creates for this turn and removes after it, for files the CLI
   * writes beside its output (copilot `--usage-output-file`) or reads (a generated config).
   */
  readonly scratchDir: string;
  /** The environment the CLI will run with (allowlisted), for backends whose flags depend on it. */
  readonly childEnv: Readonly<Record<string, string>>;
  /** The CLI runs as root (musubi is root and no `runAs` drops privileges). */
  readonly isRoot: boolean;
  readonly sessionId?: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly settings: CliSettings;
}

/** The argv (after the binary) and what goes to stdin. */
export interface CliInvocation {
  readonly args: readonly string[];
  readonly stdin?: string;
}

/** What a parser recognised in the CLI's output. */
export interface ParsedOutput {
  readonly text: string;
  readonly sessionId?: string;
  /** Tokens and cost of THIS turn only (a CLI that reports session totals is corrected by its parser). */
  readonly usage?: AgentUsage;
  /** The CLI reported a failure in its output (claude `is_error`, gemini `error`, codex `turn.failed`). */
  readonly isError: boolean;
  /** The CLI's own error message when it reported one (API error text, auth problem), for AGENT_FAILED. */
  readonly errorMessage?: string;
}

/** What `finish` gets: the captured streams and the exit of the process. */
export interface CliOutput {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
}

/**
 * Memory a runner keeps across the turns it runs, per session id (codex reports session totals, so its
 * parser remembers the total seen after each turn to report the next turn's own share). Lost when the
 * process ends; parsers must work (less precisely) without it.
 */
export interface SessionMemory {
  get(sessionId: string): unknown;
  set(sessionId: string, value: unknown): void;
}

/** Given to {@link CliBackend.createParser}: the turn being parsed and the runner's session memory. */
export interface ParserContext {
  readonly turn: CliTurn;
  readonly memory: SessionMemory;
}

/**
 * Reads one CLI's output. `onLine` sees each line of stdout and stderr as it arrives and returns
 * progress events; `finish` gets the captured output (and may read files the CLI wrote in the turn's
 * scratch folder) and returns what it recognised, or null when the output had no structure it knows
 * (the runner then falls back to the raw text and the exit code).
 */
export interface OutputParser {
  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[];
  finish(output: CliOutput): ParsedOutput | null;
}

/** One agent CLI: its binary, the auth variables it may inherit, its argv and its output format. */
export interface CliBackend {
  readonly name: Exclude<AgentBackend, 'scripted'>;
  /** The binary looked up on PATH. */
  readonly command: string;
  /**
   * Environment names (a trailing `*` is a prefix) the CLI reads for auth, endpoints, proxies and
   * sandbox switches; added to the allowlist. docs/agents.md lists them per CLI with the reason.
   */
  readonly authEnv: readonly string[];
  /**
   * More names to inherit that only the user's own CLI config knows (a codex custom provider's
   * `env_key`), read from the environment musubi runs in. Must not throw.
   */
  readonly authEnvFrom?: (source: Readonly<Record<string, string | undefined>>) => readonly string[];
  buildInvocation(turn: CliTurn): CliInvocation;
  createParser(context: ParserContext): OutputParser;
}

/**
 * A prompt passed as an argument must not look like a flag to the CLI's option parser; a leading
 * space keeps its meaning for a model and stops the parser from reading it as an option.
 */
export function promptArgument(prompt: string): string {
  return prompt.startsWith('-') ? ` ${prompt}` : prompt;
}

/** The prompt with a system prompt in front, for CLIs that have no system prompt flag. */
export function withSystemPrompt(turn: CliTurn): string {
  return turn.systemPrompt === undefined || turn.systemPrompt === ''
    ? turn.prompt
    : `${turn.systemPrompt}\n\n${turn.prompt}`;
}
