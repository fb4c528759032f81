import type { IncomingHttpHeaders } from 'node:http';

const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'openai-organization',
  'chatgpt-account-id',
]);
const SECRET_QUERY = new Set(['key', 'api_key', 'access_token', 'token']);

/** One request the endpoint answered, with every secret masked. */
export interface LoggedRequest {
  readonly seq: number;
  readonly at: string;
  readonly dialect: string;
  readonly method: string;
  /** Path and query, with secret query parameters masked. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly model?: string;
  readonly stream?: boolean;
  readonly tools?: readonly string[];
  /** The last user text exactly as the CLI sent it. */
  readonly prompt?: string;
  readonly systemText?: string;
  readonly toolResultsSinceUser?: number;
  /** What the endpoint answered: text, tool (with the tool's name), error, hang, or a side route. */
  readonly answer: string;
  readonly status: number;
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  readonly isCut?: boolean;
}

/** Headers as logged: secrets masked (`[redacted]`), arrays joined. */
export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name.toLowerCase())
      ? '[redacted]'
      : Array.isArray(value)
        ? value.join(', ')
        : value;
  }
  return out;
}

/** Path plus query as logged: secret query parameters (Gemini's `?key=`) masked. */
export function redactPath(url: URL): string {
  const query = new URLSearchParams(url.search);
  for (const name of [...query.keys()])
    if (SECRET_QUERY.has(name.toLowerCase())) query.set(name, '[redacted]');
  const q = query.toString();
  return q === '' ? url.pathname : `${url.pathname}?${q}`;
}
