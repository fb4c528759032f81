import { z } from 'zod';

/**
 * What the scripted model does for a request. `auto` plays the scripted agent through the real CLI:
 * a yadon decomposition or N.E.K.O. assessment prompt gets its JSON answer, the scripted agent's
 * instructions in the prompt (`write path text`, `run cmd …`, `reply text`) become tool calls and a final
 * text, anything else gets a short reply.
 */
export type ModelBehaviour =
  | { readonly kind: 'auto' }
  | { readonly kind: 'reply'; readonly text: string }
  /** Replies with the last user text, exactly. */
  | { readonly kind: 'echo' }
  /**
   * One tool call that writes `content` to `path` (cwd-relative), then a final text. An existing file is
   * read first where the CLI's write tool demands it (claude's `Write`), as a real model does.
   */
  | { readonly kind: 'write'; readonly path: string; readonly content: string; readonly then: string }
  /** One shell tool call running `command` (argv), then a final text. */
  | { readonly kind: 'run'; readonly command: readonly string[]; readonly then: string }
  /** An HTTP error with the API's own error body. */
  | { readonly kind: 'error'; readonly status: number; readonly message: string }
  /** The first attempt of this request fails with `status` (503 by default), later ones do `then`. */
  | { readonly kind: 'flaky'; readonly status: number; readonly then: ModelBehaviour }
  /** The first attempt's stream is cut after its first event, later ones do `then`. */
  | { readonly kind: 'cut'; readonly then: ModelBehaviour }
  /** Never answers (the connection stays open until the client goes away). */
  | { readonly kind: 'hang' }
  /** Replies with this value as JSON text. */
  | { readonly kind: 'json'; readonly value: unknown };

const text = z.string().max(1_000_000);

/**
 * The behaviour schema as users write it (a directive line or a script file): one key naming the
 * behaviour, e.g. `{"reply": "hi"}`, `{"write": {"path": "a.txt", "content": "x"}}`, `{"error": {"status":
 * 429, "message": "slow down"}}`, `{"flaky": {"then": {"reply": "ok"}}}`, `"hang"`, `"echo"`, `"auto"`.
 */
export const behaviourSchema: z.ZodType<ModelBehaviour> = z.lazy(() =>
  z.union([
    z.enum(['auto', 'echo', 'hang']).transform((kind) => ({ kind }) as ModelBehaviour),
    z.strictObject({ reply: text }).transform((b) => ({ kind: 'reply', text: b.reply }) as const),
    z
      .strictObject({
        write: z.strictObject({
          path: z.string().min(1).max(4096),
          content: text,
          then: text.default('Done.'),
        }),
      })
      .transform((b) => ({ kind: 'write', ...b.write }) as const),
    z
      .strictObject({
        run: z.strictObject({ command: z.array(z.string()).min(1), then: text.default('Done.') }),
      })
      .transform((b) => ({ kind: 'run', ...b.run }) as const),
    z
      .strictObject({
        error: z.strictObject({ status: z.number().int().min(400).max(599), message: text }),
      })
      .transform((b) => ({ kind: 'error', ...b.error }) as const),
    z
      .strictObject({
        flaky: z.strictObject({
          status: z.number().int().min(400).max(599).default(503),
          then: behaviourSchema.default({ kind: 'auto' }),
        }),
      })
      .transform((b) => ({ kind: 'flaky', ...b.flaky }) as const),
    z
      .strictObject({ cut: z.strictObject({ then: behaviourSchema.default({ kind: 'auto' }) }) })
      .transform((b) => ({ kind: 'cut', ...b.cut }) as const),
    z.strictObject({ json: z.unknown() }).transform((b) => ({ kind: 'json', value: b.json }) as const),
  ]),
);

/** The marker of a directive line in a prompt: `MUSUBI-MODEL: <behaviour as JSON>`. */
export const DIRECTIVE_MARKER = 'MUSUBI-MODEL:';

/**
 * The behaviour a prompt asks for with a directive line (`MUSUBI-MODEL: {"reply": "hi"}`), or undefined
 * when it has none. A directive that does not parse is answered as an error the CLI shows, so a typo in a
 * rehearsal is seen instead of silently replied to.
 */
export function directiveOf(prompt: string): ModelBehaviour | undefined {
  const at = prompt.lastIndexOf(DIRECTIVE_MARKER);
  if (at === -1) return undefined;
  const line =
    prompt
      .slice(at + DIRECTIVE_MARKER.length)
      .split(/\r?\n/, 1)[0]
      ?.trim() ?? '';
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { kind: 'error', status: 400, message: `musubi model endpoint: directive is not JSON: ${line}` };
  }
  const parsed = behaviourSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  return {
    kind: 'error',
    status: 400,
    message: `musubi model endpoint: unknown directive ${line}: ${parsed.error.issues[0]?.message ?? ''}`,
  };
}

const ruleSchema = z.strictObject({
  /** A regular expression tested against the last user text. */
  match: z.string().optional(),
  /** A regular expression tested against the system prompt. */
  system: z.string().optional(),
  /** A regular expression tested against the requested model name. */
  model: z.string().optional(),
  then: behaviourSchema,
});

/** A script file (`musubi dev model-endpoint --script file`): rules tried in order, then the default. */
export const endpointScriptSchema = z.strictObject({
  rules: z.array(ruleSchema).default([]),
  default: behaviourSchema.default({ kind: 'auto' }),
});

/** A parsed script file. */
export type EndpointScript = z.infer<typeof endpointScriptSchema>;

/** The script used when none is given: every request plays `auto`. */
export const DEFAULT_SCRIPT: EndpointScript = { rules: [], default: { kind: 'auto' } };

/** The behaviour for one request: a directive in the prompt, else the first matching rule, else the default. */
export function behaviourFor(
  script: EndpointScript,
  request: { readonly prompt: string; readonly system: string; readonly model: string },
): ModelBehaviour {
  const directive = directiveOf(request.prompt);
  if (directive !== undefined) return directive;
  for (const rule of script.rules) {
    if (rule.match !== undefined && !new RegExp(rule.match, 'u').test(request.prompt)) continue;
    if (rule.system !== undefined && !new RegExp(rule.system, 'u').test(request.system)) continue;
    if (rule.model !== undefined && !new RegExp(rule.model, 'u').test(request.model)) continue;
    return rule.then;
  }
  return script.default;
}
