import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Logger } from '../../core/logger.js';
import { MusubiError } from '../../core/errors.js';
import type { ConversationView } from './conversation.js';
import { lastUserText } from './conversation.js';
import { DialectRequestError, type Dialect, type DialectRequest } from './dialect.js';
import { DEFAULT_SCRIPT, type EndpointScript } from './model-behaviour.js';
import { AttemptCounter, planResponse } from './model-planner.js';
import { redactHeaders, redactPath, type LoggedRequest } from './request-log.js';

/** Largest request body accepted (a 200 KB prompt plus a CLI's tool schemas and history fit many times). */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const MAX_LOGGED = 5000;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Options of {@link ModelEndpoint}. */
export interface ModelEndpointOptions {
  readonly dialects: readonly Dialect[];
  readonly script?: EndpointScript;
  readonly logger?: Logger;
  /** Loopback only: 127.0.0.1 (default), ::1 or localhost. */
  readonly host?: string;
  /** 0 (default) lets the OS choose. */
  readonly port?: number;
  /** Called with each recorded request (secrets masked); must not throw. */
  readonly onRequest?: (entry: LoggedRequest) => void;
}

/**
 * musubi's local model endpoint: an HTTP server on loopback that speaks the Anthropic Messages, OpenAI
 * Responses / Chat Completions and Gemini APIs well enough for the real agent CLIs to run whole turns,
 * answering from a script instead of a model (see model-behaviour.ts). Every request is recorded with its
 * secrets masked (`requests()`) and logged at debug level.
 *
 * `start()` resolves with the base URL once listening (GATEWAY_ADDRESS_IN_USE for a taken port,
 * CONFIG_INVALID for a host that is not loopback). `close()` ends hanging answers and open connections;
 * idempotent.
 */
export class ModelEndpoint implements AsyncDisposable {
  readonly #options: ModelEndpointOptions;
  readonly #attempts = new AttemptCounter();
  readonly #sockets = new Set<Socket>();
  readonly #log: LoggedRequest[] = [];
  #seq = 0;
  #server: Server | undefined;
  #closing: Promise<void> | undefined;
  #url = '';

  constructor(options: ModelEndpointOptions) {
    this.#options = options;
  }

  /** The base URL (`http://127.0.0.1:<port>`); valid after `start()`. */
  get url(): string {
    return this.#url;
  }

  /** The requests answered so far, oldest first (at most the last 5,000). */
  requests(): readonly LoggedRequest[] {
    return [...this.#log];
  }

  /** Forgets the recorded requests (and the attempt counts of `flaky` and `cut`). */
  clearRequests(): void {
    this.#log.length = 0;
  }

  async start(): Promise<string> {
    const host = this.#options.host ?? '127.0.0.1';
    if (!LOOPBACK.has(host)) {
      throw new MusubiError(
        'CONFIG_INVALID',
        `model endpoint: host must be loopback (127.0.0.1, ::1), got '${host}'`,
      );
    }
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.code === 'EADDRINUSE'
            ? new MusubiError(
                'GATEWAY_ADDRESS_IN_USE',
                `model endpoint: ${host}:${this.#options.port} is in use`,
                { cause: err },
              )
            : err,
        ),
      );
      server.listen(this.#options.port ?? 0, host, () => resolve());
    });
    this.#server = server;
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return this.#url;
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const server = this.#server;
      for (const socket of this.#sockets) socket.destroy();
      if (server === undefined) return resolve();
      server.close(() => resolve());
    });
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://endpoint.invalid');
    const method = req.method ?? 'GET';
    const dialect = this.#options.dialects.find((d) => d.matches({ method, url }));
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return this.#fail(res, dialect, { method, url, req, status: 400, message });
    }
    const request: DialectRequest = { method, url, headers: req.headers, body };
    if (dialect === undefined) {
      const other = this.#options.dialects.find((d) => d.answerOther?.(request, res) === true);
      if (other !== undefined)
        return this.#record({ dialect: other.name, request, answer: 'side route', status: res.statusCode });
      return this.#fail(res, undefined, {
        method,
        url,
        req,
        status: 404,
        message: `no model API at ${method} ${url.pathname}`,
      });
    }
    let view: ConversationView;
    try {
      view = dialect.read(request);
    } catch (err) {
      const status = err instanceof DialectRequestError ? err.status : 400;
      const message = err instanceof Error ? err.message : String(err);
      return this.#fail(res, dialect, { method, url, req, status, message });
    }
    const planned = planResponse(view, this.#options.script ?? DEFAULT_SCRIPT, this.#attempts);
    const { action } = planned;
    const answer = action.kind === 'tool' ? `tool ${action.name}` : action.kind;
    const status = action.kind === 'error' ? action.status : action.kind === 'hang' ? 0 : 200;
    this.#record({
      dialect: dialect.name,
      request,
      answer,
      status,
      view,
      usage: planned.usage,
      isCut: planned.isCut,
    });
    if (action.kind === 'hang') return; // the socket stays open until the client leaves or close() runs
    if (action.kind === 'error')
      return sendJson(res, action.status, dialect.errorBody(action.status, action.message));
    dialect.write(res, planned, view);
  }

  #fail(
    res: ServerResponse,
    dialect: Dialect | undefined,
    f: { method: string; url: URL; req: IncomingMessage; status: number; message: string },
  ): void {
    const request: DialectRequest = { method: f.method, url: f.url, headers: f.req.headers, body: undefined };
    this.#record({
      dialect: dialect?.name ?? 'none',
      request,
      answer: `error: ${f.message}`,
      status: f.status,
    });
    sendJson(res, f.status, dialect?.errorBody(f.status, f.message) ?? { error: { message: f.message } });
  }

  #record(r: {
    dialect: string;
    request: DialectRequest;
    answer: string;
    status: number;
    view?: ConversationView;
    usage?: { inputTokens: number; outputTokens: number };
    isCut?: boolean;
  }): void {
    const v = r.view;
    const entry: LoggedRequest = {
      seq: ++this.#seq,
      at: new Date().toISOString(),
      dialect: r.dialect,
      method: r.request.method,
      path: redactPath(r.request.url),
      headers: redactHeaders(r.request.headers),
      answer: r.answer,
      status: r.status,
      ...(v !== undefined && {
        model: v.model,
        stream: v.stream,
        tools: v.tools.map((t) => t.name),
        prompt: lastUserText(v),
        systemText: v.systemText,
        toolResultsSinceUser: v.toolResultsSinceUser,
      }),
      ...(r.usage !== undefined && { usage: r.usage }),
      ...(r.isCut === true && { isCut: true }),
    };
    this.#log.push(entry);
    if (this.#log.length > MAX_LOGGED) this.#log.shift();
    this.#options.onRequest?.(entry);
    this.#options.logger?.debug(
      {
        seq: entry.seq,
        dialect: entry.dialect,
        path: entry.path,
        model: entry.model,
        answer: entry.answer,
        status: entry.status,
      },
      'model request',
    );
  }
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_REQUEST_BYTES) throw new Error(`request body larger than ${MAX_REQUEST_BYTES} bytes`);
    chunks.push(buf);
  }
  if (size === 0) return undefined;
  const raw = Buffer.concat(chunks);
  const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
  const text = encoding === '' || encoding === 'identity' ? raw.toString('utf8') : decompress(raw, encoding);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error('request body is not JSON');
  }
}

function decompress(raw: Buffer, encoding: string): string {
  if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(raw).toString('utf8');
  if (encoding === 'deflate') return inflateSync(raw).toString('utf8');
  if (encoding === 'zstd') throw new Error('zstd request bodies are not supported');
  throw new Error(`unknown content-encoding '${encoding}'`);
}

/** Writes one JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
