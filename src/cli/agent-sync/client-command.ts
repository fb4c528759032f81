import { pyJson, type PyJsonInput } from '../../core/python/json-dumps.js';
import {
  JsonNumber,
  isJsonArray,
  isJsonObject,
  parseJson,
  type JsonObject,
  type JsonValue,
} from '../../core/python/json-loads.js';
import { isTruthy, pyStr } from '../../core/python/repr.js';
import {
  connectAgentSync,
  exchangeLine,
  type ExchangeResult,
} from '../../gateways/agent-sync/agent-sync-client.js';

/** Connect attempts of a client subcommand (every {@link RETRY_INTERVAL_MS}), `peek` excepted. */
export const CONNECT_ATTEMPTS = 60;
export const RETRY_INTERVAL_MS = 3_000;
const MAX_REQUEST_LINE_BYTES = 65_536;

/** One client subcommand to run. */
export interface ClientCommandOptions {
  readonly host: string;
  readonly port: number;
  readonly request: { readonly [key: string]: PyJsonInput | undefined };
  /** peek never retries the connect. */
  readonly isPeek?: boolean;
  /** How long to wait for the reply (listen: its timeout + 5 s); no limit when absent. */
  readonly replyTimeoutMs?: number;
  /** get-discussion: follow `next_offset` and print every page as one reply. */
  readonly isPaged?: boolean;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Waits between connect attempts (injected so tests can skip the 3 s). */
  readonly sleep?: (ms: number) => Promise<void>;
}

type Exchange =
  { readonly ok: true; readonly reply: JsonObject } | { readonly ok: false; readonly error: string };

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function exchange(options: ClientCommandOptions, line: string, isRetrying: boolean): Promise<Exchange> {
  const sleep = options.sleep ?? delay;
  let attempt = 1;
  for (;;) {
    const connected = await connectAgentSync({ host: options.host, port: options.port });
    if (connected.ok) {
      const timeout = options.replyTimeoutMs === undefined ? {} : { timeoutMs: options.replyTimeoutMs };
      return toExchange(await exchangeLine(connected.socket, line, timeout));
    }
    if (!isRetrying || attempt >= CONNECT_ATTEMPTS)
      return { ok: false, error: `cannot connect (${connected.message})` };
    options.stderr.write(`[agent_sync] Waiting for server on port ${options.port}... (${attempt})\n`);
    attempt++;
    await sleep(RETRY_INTERVAL_MS);
  }
}

function toExchange(result: ExchangeResult): Exchange {
  if (!result.ok) {
    return { ok: false, error: result.reason === 'closed' ? 'connection closed' : result.message };
  }
  const parsed = parseJson(result.line);
  if (!parsed.ok || !isJsonObject(parsed.value)) return { ok: false, error: 'invalid reply from server' };
  return { ok: true, reply: parsed.value };
}

/** Follows `next_offset` until it is null; resolves one combined reply. */
async function allPages(options: ClientCommandOptions, first: JsonObject): Promise<Exchange> {
  const discussion: JsonValue[] = [];
  let reply = first;
  for (;;) {
    if (!isTruthy(reply.get('ok') ?? false)) return { ok: true, reply };
    const page = reply.get('discussion');
    if (isJsonArray(page)) discussion.push(...page);
    const next = reply.get('next_offset');
    if (next === undefined || next === null) break;
    const line = pyJson({ ...options.request, offset: next });
    const more = await exchange(options, line, false);
    if (!more.ok) return more;
    reply = more.reply;
  }
  const total = reply.get('total') ?? new JsonNumber(String(discussion.length));
  return {
    ok: true,
    reply: new Map<string, JsonValue>([
      ['ok', true],
      ['discussion', discussion],
      ['total', total],
      ['next_offset', null],
    ]),
  };
}

/**
 * Runs one client subcommand: one connection, one request, one reply line. Prints the reply without
 * `ok` as indented JSON (or `OK` when nothing else is in it) and resolves 0; prints `ERROR: <error>`
 * to stderr and resolves 1 on failure. Retries the connect every 3 s, 60 times (not for peek).
 */
export async function runClientCommand(options: ClientCommandOptions): Promise<number> {
  const line = pyJson(options.request);
  const fail = (error: string): number => {
    options.stderr.write(`ERROR: ${error}\n`);
    return 1;
  };
  if (Buffer.byteLength(line, 'utf8') > MAX_REQUEST_LINE_BYTES)
    return fail('Request too long (max 65536 bytes)');
  let result = await exchange(options, line, options.isPeek !== true);
  if (result.ok && options.isPaged === true) result = await allPages(options, result.reply);
  if (!result.ok) return fail(result.error);
  const reply = result.reply;
  if (!isTruthy(reply.get('ok') ?? false)) {
    const error = reply.get('error');
    return fail(error === undefined ? 'unknown' : pyStr(error));
  }
  const rest = new Map([...reply].filter(([key]) => key !== 'ok'));
  options.stdout.write(rest.size === 0 ? 'OK\n' : `${pyJson(rest, { indent: 2 })}\n`);
  return 0;
}
