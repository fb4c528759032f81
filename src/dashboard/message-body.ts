import * as z from 'zod';

// How a message body is shown in the message drawer, decided from its text and headers. No DOM.

/** A yadon `result` document (spec yadon.md 3.2): a worker's or the manager's answer to a task. */
const yadonResult = z.object({
  type: z.literal('result'),
  id: z.string().optional(),
  from: z.string().optional(),
  status: z.string().optional(),
  payload: z.object({ summary: z.string().optional(), output: z.string().optional() }),
});
/** A yadon `error` document (spec yadon.md 3.4). */
const yadonError = z.object({ type: z.literal('error'), from: z.string().optional(), message: z.string() });

/** A body as the page shows it. */
export type BodyView =
  | { readonly kind: 'empty' }
  | {
      readonly kind: 'result';
      readonly status: string;
      readonly from: string;
      readonly id: string;
      readonly summary: string;
      readonly output: string;
    }
  | { readonly kind: 'error'; readonly from: string; readonly message: string }
  /** Pretty-printed JSON. */
  | { readonly kind: 'json'; readonly text: string }
  /** An IGNITE body or any other YAML mapping, shown as written. */
  | { readonly kind: 'yaml'; readonly text: string }
  | { readonly kind: 'text'; readonly text: string };

/** What besides the text decides how a body is shown. */
export interface BodyContext {
  readonly headers?: Readonly<Record<string, string>>;
}

const ORIGIN_HEADER = 'x-musubi-protocol';
const YAML_KEY_LINE = /^[A-Za-z_][\w.-]*:(\s|$)/;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // not JSON (or cut short): shown as text or YAML instead
  }
}

/** True when `body` reads as a YAML mapping: at least two top-level `key:` lines and no prose first. */
function looksLikeYaml(body: string): boolean {
  const lines = body.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const first = lines[0];
  if (first === undefined || !(first === '---' || YAML_KEY_LINE.test(first))) return false;
  return lines.filter((l) => YAML_KEY_LINE.test(l)).length >= 2;
}

/**
 * How to show `body`: a yadon result or error document as a readable document, other JSON
 * pretty-printed, an IGNITE body (or any YAML mapping) as preformatted YAML, agent_sync and anything
 * else as text.
 */
export function classifyBody(body: string, context: BodyContext = {}): BodyView {
  if (body.trim() === '') return { kind: 'empty' };
  const origin = context.headers?.[ORIGIN_HEADER];
  const trimmed = body.trim();
  if (origin !== 'agent-sync' && (trimmed.startsWith('{') || trimmed.startsWith('['))) {
    const json = parseJson(trimmed);
    if (json !== undefined) {
      const result = yadonResult.safeParse(json);
      if (result.success) {
        const { id, from, status, payload } = result.data;
        return {
          kind: 'result',
          status: status ?? 'unknown',
          from: from ?? '',
          id: id ?? '',
          summary: payload.summary ?? '',
          output: payload.output ?? '',
        };
      }
      const error = yadonError.safeParse(json);
      if (error.success) return { kind: 'error', from: error.data.from ?? '', message: error.data.message };
      return { kind: 'json', text: JSON.stringify(json, null, 2) };
    }
  }
  const isIgnite = origin === 'ignite' || context.headers?.['ignite-type'] !== undefined;
  if (origin !== 'agent-sync' && (isIgnite || looksLikeYaml(body))) return { kind: 'yaml', text: body };
  return { kind: 'text', text: body };
}
