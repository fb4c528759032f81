import type { AgentRunEvent } from '../agents/agent-runner.js';

type ToolCall = Extract<AgentRunEvent, { type: 'tool' }>;

/** The longest quote of one failed edit, in characters. */
const QUOTE_MAX_CHARS = 300;
/** Failed edits kept per turn; the first ones say enough. */
const MAX_QUOTES = 5;

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= QUOTE_MAX_CHARS ? line : `${line.slice(0, QUOTE_MAX_CHARS - 1)}…`;
}

/**
 * Watches one turn's events for edits that failed: a `tool` call of kind `edit` whose `tool_result`
 * has `isError`. Every backend reports that the same way: claude's refused write (`… which is a
 * sensitive file`, `File has not been read yet`: a tool_result block with `is_error`), codex's failed or
 * declined `file_change`, gemini's write tool with a non-success status, opencode's tool part in state
 * `error`, copilot's `tool.execution_complete` with `success: false`, and the scripted agent's failed
 * `try write`. Only edits count: a failed command or search (a test run that fails, a grep that finds
 * nothing) is what a reviewer meets in a good turn, not a refusal of its work.
 *
 * A result is paired with its call by `callId`, else with the latest call before it.
 */
export class FailedEdits {
  readonly #calls = new Map<string, ToolCall>();
  #latest: ToolCall | undefined;
  readonly #quotes: string[] = [];

  /** Takes one event of the turn, in order; ignores every kind but `tool` and `tool_result`. */
  readonly observe = (event: AgentRunEvent): void => {
    if (event.type === 'tool') {
      if (event.callId !== undefined) this.#calls.set(event.callId, event);
      this.#latest = event;
      return;
    }
    if (event.type !== 'tool_result') return;
    const call = event.callId === undefined ? this.#latest : this.#calls.get(event.callId);
    if (event.callId !== undefined) this.#calls.delete(event.callId);
    if (call?.kind !== 'edit' || !event.isError || this.#quotes.length >= MAX_QUOTES) return;
    const what =
      call.summary === '' || call.summary === call.name ? call.name : `${call.name} ${call.summary}`;
    this.#quotes.push(oneLine(`${what}: ${event.output === '' ? 'failed' : event.output}`));
  };

  /** Each failed edit so far as one line, `<tool> <file>: <what it returned>`, oldest first. */
  get quotes(): readonly string[] {
    return this.#quotes;
  }
}
