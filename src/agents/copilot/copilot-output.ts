import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';

const count = z.number().nonnegative().catch(0);

// Copilot's JSONL events are `{type, data}`; the schema is not documented, so only the fields used are
// read and every one is optional.
const eventSchema = z.object({
  type: z.string(),
  sessionId: z.string().optional(),
  data: z
    .object({
      sessionId: z.string().optional(),
      content: z.string().optional(),
      inputTokens: count.optional(),
      outputTokens: count.optional(),
      cost: count.optional(),
      message: z.string().optional(),
    })
    .default({}),
});

/**
 * Parses `copilot --output-format json`: `session.start` (session id), `assistant.message` (the last
 * one is the answer), `assistant.usage` (summed), `session.error` (failure), and a final `result`.
 */
export class CopilotOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #text = '';
  #usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  #hasUsage = false;
  #error: string | undefined;
  #isRecognised = false;

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
    } else if (type === 'assistant.usage') {
      this.#hasUsage = true;
      this.#usage = {
        inputTokens: this.#usage.inputTokens + (data.inputTokens ?? 0),
        outputTokens: this.#usage.outputTokens + (data.outputTokens ?? 0),
        costUsd: this.#usage.costUsd + (data.cost ?? 0),
      };
    } else if (type === 'session.error') {
      this.#error = data.message ?? 'session error';
    }
    return events;
  }

  finish(_output: CliOutput): ParsedOutput | null {
    if (!this.#isRecognised) return null;
    return {
      text: this.#text !== '' ? this.#text : (this.#error ?? ''),
      isError: this.#error !== undefined,
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(this.#hasUsage && { usage: this.#usage }),
    };
  }
}
