import { z } from 'zod';
import type { CliOutput, ParsedOutput } from '../cli/cli-backend.js';

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
type GeminiOutput = z.infer<typeof outputSchema>;

/** How much of the end of stderr is searched for gemini's own output. */
export const STDERR_TAIL_CHARS = 64 * 1024;

/** The API's own error body, which gemini puts JSON-encoded in `error.message` for an HTTP error. */
const apiErrorSchema = z.object({
  error: z.object({ message: z.string(), code: z.number().optional(), status: z.string().optional() }),
});

function parseObject(text: string): GeminiOutput | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = outputSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const out = parsed.data;
  return out.response === undefined && out.error === undefined && out.session_id === undefined
    ? undefined
    : out;
}

/** The JSON object in gemini's stdout: the whole output, else the span from the first `{` to the last `}`. */
function fromStdout(stdout: string): GeminiOutput | undefined {
  const whole = stdout.trim();
  if (whole.startsWith('{')) {
    const out = parseObject(whole);
    if (out !== undefined) return out;
  }
  const span = stdout.slice(stdout.indexOf('{'), stdout.lastIndexOf('}') + 1);
  return span.startsWith('{') ? parseObject(span) : undefined;
}

/**
 * The last gemini object in stderr, where `-o json` writes its error object (pretty-printed, after
 * warnings and stack traces that have braces of their own): tried from each line that opens an object,
 * last first, up to each line that closes one.
 */
function fromStderr(stderr: string): GeminiOutput | undefined {
  // The object is the last thing gemini writes; the tail bounds the work on a long, noisy stderr.
  const lines = stderr.slice(-STDERR_TAIL_CHARS).split(/\r?\n/);
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!(lines[start] ?? '').startsWith('{')) continue;
    for (let end = start; end < lines.length; end++) {
      if (!(lines[end] ?? '').trimEnd().endsWith('}')) continue;
      const out = parseObject(lines.slice(start, end + 1).join('\n'));
      if (out !== undefined) return out;
    }
  }
  return undefined;
}

/** gemini's error message, with the API's own message unwrapped from the JSON body it embeds. */
export function errorText(message: string): string {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return message;
  }
  const api = apiErrorSchema.safeParse(raw);
  if (!api.success) return message;
  const { code, status } = api.data.error;
  const tag = [code, status].filter((t) => t !== undefined).join(' ');
  return tag === '' ? api.data.error.message : `${api.data.error.message} (${tag})`;
}

/**
 * The outcome of `gemini -o json`, which prints one (pretty-printed) object at the end: on stdout for a
 * turn that ran, on stderr (after warnings and stack traces) for one that failed (API error, auth,
 * dropped stream); null when neither holds one.
 */
export function fromJsonOutput({ stdout, stderr }: CliOutput): ParsedOutput | null {
  const out = fromStdout(stdout) ?? fromStderr(stderr);
  if (out === undefined) return null;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const model of Object.values(out.stats?.models ?? {})) {
    inputTokens += model.tokens?.prompt ?? model.tokens?.input ?? 0;
    outputTokens += (model.tokens?.candidates ?? 0) + (model.tokens?.thoughts ?? 0);
  }
  const errorMessage = out.error === undefined ? undefined : errorText(out.error.message);
  return {
    text: out.response ?? errorMessage ?? '',
    isError: out.error !== undefined,
    ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
    ...(out.session_id !== undefined && { sessionId: out.session_id }),
    ...(out.stats !== undefined && { usage: { inputTokens, outputTokens, costUsd: 0 } }),
  };
}
