import type { z } from 'zod';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ConversationView, PlannedResponse } from './conversation.js';

/** The model APIs the endpoint speaks. */
export type DialectName = 'anthropic' | 'openai-responses' | 'openai-chat' | 'gemini';

/** One request as a dialect sees it. */
export interface DialectRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body (already parsed; `undefined` for a request without one). */
  readonly body: unknown;
}

/** Thrown by `read` for a body the API would refuse: answered with `errorBody(status, message)`. */
export class DialectRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'DialectRequestError';
  }
}

/**
 * One model API spoken by the endpoint. `matches` picks the dialect for a request; `read` turns the body
 * into the neutral view (throws {@link DialectRequestError} for a body the real API would refuse);
 * `write` answers with the planned response in the API's wire shape, streamed (SSE) when the request
 * asked for it; `errorBody` is the API's own error object for an HTTP error. A dialect may also answer
 * side routes of its API (model lists, token counts) in `answerOther`, returning false when it does not.
 */
export interface Dialect {
  readonly name: DialectName;
  matches(request: Pick<DialectRequest, 'method' | 'url'>): boolean;
  read(request: DialectRequest): ConversationView;
  write(res: ServerResponse, planned: PlannedResponse, view: ConversationView): void;
  errorBody(status: number, message: string): unknown;
  answerOther?(request: DialectRequest, res: ServerResponse): boolean;
}

/**
 * Parses a request body with the dialect's zod schema; a body the schema refuses is a 400 naming the
 * first problem's path (what the real APIs answer for a malformed request).
 */
export function parseRequestBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new DialectRequestError(
    400,
    `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid request'}`,
  );
}
