import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';

const count = z.number().nonnegative().catch(0);

const eventSchema = z.object({
  type: z.string(),
  sessionID: z.string().optional(),
  part: z
    .object({
      type: z.string().optional(),
      text: z.string().optional(),
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

/**
 * Parses `opencode run --format json` events (1.18.33): `text` parts (joined per step; the last step's
 * text is the answer), `step_finish` tokens and cost (summed over the steps of this run: opencode
 * prints only this turn's steps, also after `--session`), `tool_use` (ignored), `error` (a failure;
 * its `error.data.message`, the API's own message for an `APIError`, is the errorMessage), and the
 * `sessionID` every event carries.
 */
export class OpencodeOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #texts: string[] = [];
  #lastStepText = '';
  #usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  #hasUsage = false;
  #error: string | undefined;
  #isRecognised = false;

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
    } else if (ev.type === 'error') {
      this.#error = ev.error?.data?.message ?? ev.error?.name ?? 'error';
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
