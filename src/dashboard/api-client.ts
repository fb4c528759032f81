import type * as z from 'zod';
import { errorReply } from '../gateways/http/api-schemas.js';

/** A failed API call: the gateway's error code and message, or NETWORK / BAD_REPLY. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: string;
  readonly status: number;

  constructor(code: string, message: string, status: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/**
 * Talks to the HTTP gateway of the page's own origin (cookies carry the token when one is needed).
 * Every reply is parsed with its schema; failures throw ApiError.
 */
export class ApiClient {
  async get<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.#call(path, { method: 'GET' }, schema);
  }

  /** POSTs `body` as JSON (or nothing), from this origin so the gateway's Origin check passes. */
  async post<S extends z.ZodType>(path: string, schema: S, body?: unknown): Promise<z.output<S>> {
    const init: RequestInit =
      body === undefined
        ? { method: 'POST' }
        : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
    return this.#call(path, init, schema);
  }

  /** Sends a DELETE (no body), from this origin so the gateway's Origin check passes. */
  async delete<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.#call(path, { method: 'DELETE' }, schema);
  }

  async #call<S extends z.ZodType>(path: string, init: RequestInit, schema: S): Promise<z.output<S>> {
    let res: Response;
    try {
      res = await fetch(path, { ...init, credentials: 'same-origin', cache: 'no-store' });
    } catch {
      throw new ApiError('NETWORK', 'the hub does not answer', 0);
    }
    const json: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const err = errorReply.safeParse(json);
      throw err.success
        ? new ApiError(err.data.code, err.data.message, res.status)
        : new ApiError('BAD_REPLY', `HTTP ${res.status}`, res.status);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new ApiError('BAD_REPLY', `unexpected reply from ${path}`, res.status);
    return parsed.data;
  }
}
