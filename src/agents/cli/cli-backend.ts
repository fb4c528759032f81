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
  readonly usage?: AgentUsage;
  /** The CLI reported a failure in its output (claude `is_error`, gemini `error`, codex `turn.failed`). */
  readonly isError: boolean;
}

/**
 * Reads one CLI's output. `onLine` sees each stdout line as it arrives and returns progress events;
 * `finish` gets the captured stdout and returns what it recognised, or null when the output had no
 * structure it knows (the runner then falls back to the raw text and the exit code).
 */
export interface OutputParser {
  onLine(line: string): readonly AgentRunEvent[];
  finish(stdout: string): ParsedOutput | null;
}

/** One agent CLI: its binary, the auth variables it may inherit, its argv and its output format. */
export interface CliBackend {
  readonly name: Exclude<AgentBackend, 'scripted'>;
  /** The binary looked up on PATH. */
  readonly command: string;
  /** Environment names (a trailing `*` is a prefix) the CLI needs for auth; added to the allowlist. */
  readonly authEnv: readonly string[];
  buildInvocation(turn: CliTurn): CliInvocation;
  createParser(): OutputParser;
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
