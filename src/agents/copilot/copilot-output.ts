import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput, SessionMemory } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { cutText, toolEvent, toolResultEvent } from '../cli/tool-event.js';
import {
  readSessionTotals,
  readUsageFile,
  sessionEventsFile,
  tokensSince,
  type CopilotTokens,
} from './copilot-usage.js';

// Copilot's JSONL events are `{type, data, id, timestamp, …}`; the final `result` line carries
// `sessionId` and `exitCode` at the top level. The schema is not a public contract, so only the fields
// used are read and every one is optional.
const eventSchema = z.object({
  type: z.string(),
  sessionId: z.string().optional(),
  exitCode: z.number().optional(),
  data: z
    .object({
      sessionId: z.string().optional(),
      content: z.string().optional(),
      message: z.string().optional(),
      // tool.execution_start / tool.execution_complete
      toolCallId: z.string().optional().catch(undefined),
      toolName: z.string().optional().catch(undefined),
      arguments: z.unknown().optional(),
      success: z.boolean().optional().catch(undefined),
      result: z.object({ content: z.string().optional() }).optional().catch(undefined),
      error: z.object({ message: z.string().optional() }).optional().catch(undefined),
      // model.call_failure
      statusCode: z.number().optional().catch(undefined),
      errorMessage: z.string().optional().catch(undefined),
    })
    .default({}),
});
type EventData = z.infer<typeof eventSchema>['data'];

const apiErrorSchema = z.object({ message: z.string() });

/** A failed model call (copilot retries some): its status and the API's own message from the body. */
function callFailureText(data: EventData): string {
  const body = data.errorMessage ?? '';
  const api = apiErrorSchema.safeParse(parseJsonLine(body));
  const message = api.success ? api.data.message : body || 'unknown error';
  return `model call failed${data.statusCode === undefined ? '' : ` (HTTP ${data.statusCode})`}: ${message}`;
}

function toolEvents(type: string, data: EventData): AgentRunEvent[] {
  if (type === 'tool.execution_start' && data.toolName !== undefined)
    return [toolEvent({ name: data.toolName, args: data.arguments, callId: data.toolCallId })];
  if (type === 'tool.execution_complete') {
    const output = data.result?.content ?? data.error?.message ?? '';
    return [toolResultEvent({ output, isError: data.success === false, callId: data.toolCallId })];
  }
  return [];
}

/** A session id that is safe to use as a folder name (copilot's are UUIDs). */
const SAFE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Where a {@link CopilotOutputParser} finds the usage of its turn. */
export interface CopilotParserOptions {
  /** The `--usage-output-file` the turn's CLI writes (session totals after the turn). */
  readonly usageFile?: string;
  /** The CLI's home (`$COPILOT_HOME` or `~/.copilot`), where the events file of a resumed session is. */
  readonly copilotHome?: string;
  /** The session this turn resumes (its totals before the turn are subtracted). */
  readonly resumedSessionId?: string;
  /** The runner's memory: the session totals seen after this runner's previous turn of a session. */
  readonly memory?: SessionMemory;
}

const tokensSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });

/**
 * Parses `copilot --output-format json` (1.0.102): `assistant.message` (the last non-empty one is the
 * answer), `session.error` (failure; its `message` is the API's error text), and the final `result`
 * (session id, exit code). Progress events: `message` (assistant.message), `tool`
 * (tool.execution_start), `tool_result` (tool.execution_complete: its result content, or its error when
 * `success` is false), `error` (session.error, and model.call_failure, also for calls copilot retries). Usage is not on stdout: it comes from the `--usage-output-file`, which holds
 * the SESSION's totals, so this turn's share is those minus the totals before the turn (the last
 * `session.shutdown` snapshot in the resumed session's events file, read before the CLI starts, else
 * the runner's memory of the previous turn). A resumed session whose earlier totals are unknown reports
 * no usage rather than the whole session's. Copilot reports no money (BYOK costs nothing to it; GitHub
 * bills premium requests), so `costUsd` is 0.
 */
export class CopilotOutputParser implements OutputParser {
  readonly #options: CopilotParserOptions;
  readonly #before: CopilotTokens | undefined;
  #sessionId: string | undefined;
  #text = '';
  #error: string | undefined;
  #exitCode: number | undefined;
  #isRecognised = false;

  constructor(options: CopilotParserOptions = {}) {
    this.#options = options;
    this.#before = this.#totalsBeforeTurn();
  }

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = eventSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    this.#isRecognised = true;
    const { type, data } = parsed.data;
    const events: AgentRunEvent[] = [];
    const sessionId = data.sessionId ?? parsed.data.sessionId;
    if (sessionId !== undefined && sessionId !== this.#sessionId) {
      this.#sessionId = sessionId;
      events.push({ type: 'session', sessionId });
    }
    if (type === 'assistant.message' && data.content !== undefined && data.content !== '') {
      this.#text = data.content;
      events.push({ type: 'message', text: data.content });
    } else if (type === 'session.error') {
      this.#error = data.message ?? 'session error';
      events.push({ type: 'error', message: cutText(this.#error) });
    } else if (type === 'model.call_failure') {
      events.push({ type: 'error', message: cutText(callFailureText(data)) });
    } else if (type === 'result' && parsed.data.exitCode !== undefined) {
      this.#exitCode = parsed.data.exitCode;
    }
    events.push(...toolEvents(type, data));
    return events;
  }

  finish(_output: CliOutput): ParsedOutput | null {
    if (!this.#isRecognised) return null;
    const isError = this.#error !== undefined || (this.#exitCode !== undefined && this.#exitCode !== 0);
    const usage = this.#turnUsage();
    return {
      text: this.#text !== '' ? this.#text : (this.#error ?? ''),
      isError,
      ...(this.#error !== undefined && { errorMessage: this.#error }),
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(usage !== undefined && { usage }),
    };
  }

  #totalsBeforeTurn(): CopilotTokens | undefined {
    const { resumedSessionId: id, copilotHome } = this.#options;
    if (id === undefined || copilotHome === undefined || !SAFE_SESSION_ID.test(id)) return undefined;
    return readSessionTotals(sessionEventsFile(copilotHome, id));
  }

  #turnUsage(): AgentUsage | undefined {
    const { usageFile, memory, resumedSessionId } = this.#options;
    if (usageFile === undefined) return undefined;
    const total = readUsageFile(usageFile);
    if (total === undefined) return undefined;
    const sessionId = this.#sessionId ?? resumedSessionId;
    const remembered = tokensSchema.safeParse(sessionId === undefined ? undefined : memory?.get(sessionId));
    if (sessionId !== undefined) memory?.set(sessionId, total);
    const before =
      resumedSessionId === undefined
        ? { inputTokens: 0, outputTokens: 0 }
        : (this.#before ?? (remembered.success ? remembered.data : undefined));
    if (before === undefined) return undefined;
    return { ...tokensSince(total, before), costUsd: 0 };
  }
}
