import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { cutText, toolEvent, toolResultEvent } from '../cli/tool-event.js';

const count = z.number().nonnegative().catch(0);

const eventSchema = z.object({
  type: z.string(),
  sessionID: z.string().optional(),
  part: z
    .object({
      type: z.string().optional(),
      text: z.string().optional(),
      tool: z.string().optional().catch(undefined),
      callID: z.string().optional().catch(undefined),
      state: z
        .object({
          status: z.string().catch(''),
          input: z.unknown().optional(),
          output: z.string().optional().catch(undefined),
          error: z.string().optional().catch(undefined),
        })
        .optional()
        .catch(undefined),
      cost: count.optional(),
      tokens: z
        .object({
          input: count.default(0),
          output: count.default(0),
          reasoning: count.default(0),
          cache: z.object({ read: count.default(0), write: count.default(0) }).optional(),
        })
        .optional(),
    })
    .optional(),
  error: z
    .object({
      name: z.string().optional(),
      data: z.object({ message: z.string().optional(), statusCode: z.number().optional() }).optional(),
    })
    .optional(),
});
type Part = NonNullable<z.infer<typeof eventSchema>['part']>;

/**
 * Parses `opencode run --format json` events (1.18.33): `text` parts (joined per step; the last step's
 * text is the answer), `step_finish` tokens and cost (summed over the steps of this run: opencode
 * prints only this turn's steps, also after `--session`), `tool_use`, `error` (a failure; its
 * `error.data.message`, the API's own message for an `APIError`, is the errorMessage), and the
 * `sessionID` every event carries.
 *
 * Progress events: `message` (text parts), `tool` and `tool_result` (a `tool_use` part: opencode prints
 * it once the call is done, with `state.input` and `state.output`, or `state.error` when its status is
 * `error`), `usage` (the running sum after each step_finish) and `error` (error events).
 */
export class OpencodeOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #texts: string[] = [];
  #lastStepText = '';
  #usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  #hasUsage = false;
  #error: string | undefined;
  #isRecognised = false;
  /** Calls whose `tool` event is out (a call printed again, as it progresses, is not repeated). */
  readonly #toolCalls = new Set<string>();

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = eventSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    this.#isRecognised = true;
    const ev = parsed.data;
    const events: AgentRunEvent[] = [];
    if (ev.sessionID !== undefined && ev.sessionID !== this.#sessionId) {
      this.#sessionId = ev.sessionID;
      events.push({ type: 'session', sessionId: ev.sessionID });
    }
    if (ev.type === 'step_start') this.#texts = [];
    else if (ev.type === 'text' && ev.part?.text !== undefined) {
      this.#texts.push(ev.part.text);
      this.#lastStepText = this.#texts.join('');
      events.push({ type: 'message', text: ev.part.text });
    } else if (ev.type === 'step_finish' && ev.part !== undefined) {
      const t = ev.part.tokens;
      this.#hasUsage = true;
      this.#usage = {
        inputTokens:
          this.#usage.inputTokens + (t ? t.input + (t.cache?.read ?? 0) + (t.cache?.write ?? 0) : 0),
        outputTokens: this.#usage.outputTokens + (t ? t.output + t.reasoning : 0),
        costUsd: this.#usage.costUsd + (ev.part.cost ?? 0),
      };
      events.push({ type: 'usage', usage: this.#usage });
    } else if (ev.type === 'tool_use' && ev.part !== undefined) {
      events.push(...this.#toolEvents(ev.part));
    } else if (ev.type === 'error') {
      this.#error = ev.error?.data?.message ?? ev.error?.name ?? 'error';
      events.push({ type: 'error', message: cutText(this.#error) });
    }
    return events;
  }

  #toolEvents(part: Part): AgentRunEvent[] {
    if (part.tool === undefined) return [];
    const events: AgentRunEvent[] = [];
    const callId = part.callID;
    if (callId === undefined || !this.#toolCalls.has(callId)) {
      if (callId !== undefined) this.#toolCalls.add(callId);
      events.push(toolEvent({ name: part.tool, args: part.state?.input, callId }));
    }
    const state = part.state;
    if (state?.status === 'completed' || state?.status === 'error') {
      const isError = state.status === 'error';
      const output = (isError ? state.error : state.output) ?? '';
      events.push(toolResultEvent({ output, isError, callId }));
    }
    return events;
  }

  finish(_output: CliOutput): ParsedOutput | null {
    if (!this.#isRecognised) return null;
    return {
      text: this.#lastStepText !== '' ? this.#lastStepText : (this.#error ?? ''),
      isError: this.#error !== undefined,
      ...(this.#error !== undefined && { errorMessage: this.#error }),
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(this.#hasUsage && { usage: this.#usage }),
    };
  }
}
