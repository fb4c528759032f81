import { isUtf8 } from 'node:buffer';
import {
  ErrorCode as RpcErrorCode,
  JSONRPCMessageSchema,
  RequestIdSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { MusubiError, type ErrorCode } from '../../core/errors.js';

/**
 * A JSON-RPC error response as written for a rejected line. Unlike the SDK's type its id may be null:
 * JSON-RPC 2.0 requires null when the id of the request could not be read. `data` carries our code.
 */
export interface JsonRpcErrorReply {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: {
    readonly code: RpcErrorCode;
    readonly message: string;
    readonly data: { readonly code: ErrorCode; readonly details?: Record<string, unknown> };
  };
}

/** A line that does not reach the protocol: the reply it gets and the error to report. */
export interface RejectedLine {
  readonly kind: 'rejected';
  readonly reply: JsonRpcErrorReply;
  readonly error: MusubiError;
}

/** What one input line is: a message for the protocol, nothing (a blank line), or rejected. */
export type DecodedLine =
  { readonly kind: 'message'; readonly message: JSONRPCMessage } | { readonly kind: 'blank' } | RejectedLine;

function rejected(rpcCode: RpcErrorCode, error: MusubiError, id: RequestId | null = null): RejectedLine {
  const data = { code: error.code, ...(error.details !== undefined && { details: error.details }) };
  return {
    kind: 'rejected',
    error,
    reply: { jsonrpc: '2.0', id, error: { code: rpcCode, message: error.message, data } },
  };
}

const MIB = 1024 * 1024;

/**
 * The rejection of a line longer than `maxLineBytes` (GATEWAY_FRAME_TOO_LARGE, JSON-RPC Invalid
 * Request): nothing of it was read, so its id is unknown.
 */
export function rejectLongLine(maxLineBytes: number): RejectedLine {
  const limit =
    maxLineBytes % MIB === 0 ? `${maxLineBytes} bytes (${maxLineBytes / MIB} MiB)` : `${maxLineBytes} bytes`;
  const error = new MusubiError(
    'GATEWAY_FRAME_TOO_LARGE',
    `message too large: one line of MCP over stdio may hold at most ${limit}; the line was skipped`,
    { details: { maxLineBytes } },
  );
  return rejected(RpcErrorCode.InvalidRequest, error);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id to answer an invalid message with: its own when it reads as a request with a valid id, else null. */
function replyId(value: Record<string, unknown>): RequestId | null {
  if (typeof value['method'] !== 'string') return null;
  const id = RequestIdSchema.safeParse(value['id']);
  return id.success ? id.data : null;
}

function invalid(message: string): MusubiError {
  return new MusubiError('GATEWAY_FRAME_INVALID', message);
}

/**
 * Decodes one line of MCP over stdio (without its `\n`; a trailing `\r` is allowed) and checks it with
 * the SDK's message schema. Not UTF-8 or not JSON: Parse Error. A JSON-RPC batch (an array; MCP sends
 * one message per line and dropped batches in protocol version 2025-06-18, and the SDK's stdio
 * transport never took them), an invalid id or any other shape: Invalid Request. Error texts never
 * quote the line.
 */
export function decodeLine(line: Buffer): DecodedLine {
  if (!isUtf8(line)) return rejected(RpcErrorCode.ParseError, invalid('parse error: the line is not UTF-8'));
  const text = line.toString('utf8');
  if (text.trim() === '') return { kind: 'blank' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's own message quotes the input, which must not reach the reply or the logs.
    return rejected(RpcErrorCode.ParseError, invalid('parse error: the line is not JSON'));
  }
  const message = JSONRPCMessageSchema.safeParse(value);
  if (message.success) return { kind: 'message', message: message.data };
  if (Array.isArray(value)) {
    const why = 'JSON-RPC batches are not supported: send one message per line (MCP 2025-06-18 and later)';
    return rejected(RpcErrorCode.InvalidRequest, invalid(why));
  }
  if (!isRecord(value))
    return rejected(RpcErrorCode.InvalidRequest, invalid('invalid request: a JSON-RPC message is an object'));
  if ('id' in value && !RequestIdSchema.safeParse(value['id']).success)
    return rejected(
      RpcErrorCode.InvalidRequest,
      invalid('invalid request: id must be a string or an integer'),
    );
  return rejected(
    RpcErrorCode.InvalidRequest,
    invalid('invalid request: not a JSON-RPC 2.0 request, notification or response'),
    replyId(value),
  );
}
