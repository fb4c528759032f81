import { isMusubiError, type ErrorCode, type MusubiError } from '../../core/errors.js';

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  ENVELOPE_INVALID: 400,
  MAILBOX_NAME_INVALID: 400,
  KV_KEY_INVALID: 400,
  USAGE_INVALID: 400,
  GATEWAY_FRAME_INVALID: 400,
  GATEWAY_UNAUTHORIZED: 401,
  GATEWAY_FORBIDDEN: 403,
  NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  RUN_NOT_A_REPOSITORY: 400,
  STORE_CONFLICT: 409,
  RUN_ACTIVE: 409,
  RUN_LIMIT_REACHED: 429,
  LEASE_EXPIRED: 409,
  GATEWAY_FRAME_TOO_LARGE: 413,
  BUS_CLOSED: 503,
  STORE_CLOSED: 503,
  STORE_UNAVAILABLE: 503,
  GATEWAY_UNAVAILABLE: 503,
};

/** An error ready to be written: HTTP status and the `{ code, message, details }` body. */
export interface HttpErrorReply {
  readonly status: number;
  readonly body: ReturnType<MusubiError['toJSON']>;
  /** True when the cause was not a MusubiError (or had no mapped status) and should be logged. */
  readonly isUnexpected: boolean;
}

/** fastify's own request errors (body too large, bad JSON, bad content type) carry a 4xx statusCode. */
function frameworkStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('statusCode' in err)) return undefined;
  const status = err.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/**
 * Turns anything thrown by a route into a status and a wire body. MusubiErrors keep their code; fastify's
 * request errors become GATEWAY_FRAME_TOO_LARGE (413) or GATEWAY_FRAME_INVALID (their 4xx); anything else is
 * INTERNAL (500) with a fixed message, so no internals leak to the client.
 */
export function toHttpErrorReply(err: unknown): HttpErrorReply {
  if (isMusubiError(err)) {
    const status = STATUS_BY_CODE[err.code];
    return { status: status ?? 500, body: err.toJSON(), isUnexpected: status === undefined };
  }
  const status = frameworkStatus(err);
  if (status === 413) {
    return {
      status,
      body: { code: 'GATEWAY_FRAME_TOO_LARGE', message: 'request body too large' },
      isUnexpected: false,
    };
  }
  if (status !== undefined) {
    const message = err instanceof Error ? err.message : 'bad request';
    return { status, body: { code: 'GATEWAY_FRAME_INVALID', message }, isUnexpected: false };
  }
  return {
    status: 500,
    body: { code: 'INTERNAL', message: 'internal error; see the hub log' },
    isUnexpected: true,
  };
}
