/**
 * Every error code musubi can raise. Codes are a contract: never rename or reuse one; retired codes stay
 * listed with a comment. Each code is documented in docs/errors.md (a test enforces that).
 */
export const ErrorCodes = {
  // core
  ENVELOPE_INVALID: 'ENVELOPE_INVALID',
  MAILBOX_NAME_INVALID: 'MAILBOX_NAME_INVALID',
  KV_KEY_INVALID: 'KV_KEY_INVALID',
  CONFIG_INVALID: 'CONFIG_INVALID',
  USAGE_INVALID: 'USAGE_INVALID',
  NOT_FOUND: 'NOT_FOUND',
  ABORTED: 'ABORTED',
  // store
  STORE_CONFLICT: 'STORE_CONFLICT',
  STORE_CLOSED: 'STORE_CLOSED',
  STORE_URL_INVALID: 'STORE_URL_INVALID',
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  STORE_CORRUPT: 'STORE_CORRUPT',
  LEASE_EXPIRED: 'LEASE_EXPIRED',
  // bus
  BUS_CLOSED: 'BUS_CLOSED',
  // agents
  AGENT_NOT_FOUND: 'AGENT_NOT_FOUND',
  AGENT_BACKEND_UNKNOWN: 'AGENT_BACKEND_UNKNOWN',
  AGENT_TIMEOUT: 'AGENT_TIMEOUT',
  AGENT_CANCELED: 'AGENT_CANCELED',
  AGENT_FAILED: 'AGENT_FAILED',
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  SCRIPT_INVALID: 'SCRIPT_INVALID',
  PATH_OUTSIDE_CWD: 'PATH_OUTSIDE_CWD',
  // gateways
  GATEWAY_FRAME_TOO_LARGE: 'GATEWAY_FRAME_TOO_LARGE',
  GATEWAY_FRAME_INVALID: 'GATEWAY_FRAME_INVALID',
  GATEWAY_UNAVAILABLE: 'GATEWAY_UNAVAILABLE',
  GATEWAY_ADDRESS_IN_USE: 'GATEWAY_ADDRESS_IN_USE',
  GATEWAY_UNAUTHORIZED: 'GATEWAY_UNAUTHORIZED',
  GATEWAY_FORBIDDEN: 'GATEWAY_FORBIDDEN',
  // runs (musubi run)
  RUN_NOT_A_REPOSITORY: 'RUN_NOT_A_REPOSITORY',
  RUN_GIT_FAILED: 'RUN_GIT_FAILED',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  RUN_ACTIVE: 'RUN_ACTIVE',
  RUN_LIMIT_REACHED: 'RUN_LIMIT_REACHED',
  INTERNAL: 'INTERNAL',
} as const;

/** A stable musubi error code (`AREA_WHAT`). */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Options accepted by {@link MusubiError}. */
export interface MusubiErrorOptions {
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
}

/**
 * The one error class musubi throws at its boundaries. Match on `code`, never on `message`.
 * Wire replies render it with {@link MusubiError.toJSON}: `{ code, message, details }`, never a stack.
 */
export class MusubiError extends Error {
  override readonly name = 'MusubiError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: MusubiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }

  /** The wire shape of this error: code, message and details, without a stack. */
  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `err` is a {@link MusubiError}, optionally with the given code. */
export function isMusubiError(err: unknown, code?: ErrorCode): err is MusubiError {
  return err instanceof MusubiError && (code === undefined || err.code === code);
}
