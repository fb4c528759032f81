import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';

const count = z.number().nonnegative().catch(0);

const tokensSchema = z.object({
  prompt: count.optional(),
  input: count.optional(),
  candidates: count.default(0),
  thoughts: count.default(0),
});

const outputSchema = z.object({
  session_id: z.string().optional(),
  response: z.string().optional(),
  stats: z
    .object({ models: z.record(z.string(), z.object({ tokens: tokensSchema.optional() })).default({}) })
    .optional(),
  error: z.object({ message: z.string().default(''), code: z.unknown().optional() }).optional(),
});

/** The JSON object in gemini's stdout: the whole output, else the span from the first `{` to the last `}`. */
function extractObject(stdout: string): unknown {
  for (const candidate of [stdout.trim(), stdout.slice(stdout.indexOf('{'), stdout.lastIndexOf('}') + 1)]) {
    if (!candidate.startsWith('{')) continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // Try the next candidate; none parsing means the output had no JSON object.
    }
  }
  return undefined;
}

/** Parses `gemini -o json`: one object printed at the end, so everything happens in `finish`. */
export class GeminiOutputParser implements OutputParser {
  onLine(): readonly AgentRunEvent[] {
    return [];
  }

  finish({ stdout }: CliOutput): ParsedOutput | null {
    const parsed = outputSchema.safeParse(extractObject(stdout));
    if (!parsed.success) return null;
    const out = parsed.data;
    if (out.response === undefined && out.error === undefined && out.session_id === undefined) return null;
    let inputTokens = 0;
    let outputTokens = 0;
    for (const model of Object.values(out.stats?.models ?? {})) {
      inputTokens += model.tokens?.prompt ?? model.tokens?.input ?? 0;
      outputTokens += (model.tokens?.candidates ?? 0) + (model.tokens?.thoughts ?? 0);
    }
    return {
      text: out.response ?? out.error?.message ?? '',
      isError: out.error !== undefined,
      ...(out.session_id !== undefined && { sessionId: out.session_id }),
      ...(out.stats !== undefined && { usage: { inputTokens, outputTokens, costUsd: 0 } }),
    };
  }
}
