import type { CliContext } from '../cli-context.js';

/** One HTTP call of a client command. */
export interface ClientRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  /** Explicit --port; otherwise config `neko.httpPort` (default 48915). */
  readonly port?: number;
}

const REQUEST_TIMEOUT_MS = 30_000;

async function configuredPort(ctx: CliContext): Promise<number> {
  const [{ resolveNekoSettings }, config] = await Promise.all([
    import('../../gateways/neko/neko-settings.js'),
    ctx.loadConfig(),
  ]);
  return resolveNekoSettings(config.neko, ctx.env, process.cwd()).httpPort;
}

/**
 * Calls the agent server's HTTP API and prints the JSON body with 2-space indentation. Resolves the exit
 * code: 0 for a 2xx answer whose body has no `success: false`, else 1; an unreachable server prints
 * `error: agent server not reachable at 127.0.0.1:<port>` on stderr.
 */
export async function runClientCommand(ctx: CliContext, request: ClientRequest): Promise<number> {
  const port = request.port ?? (await configuredPort(ctx));
  let response: Response;
  try {
    response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
      method: request.method,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(request.body !== undefined && {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request.body),
      }),
    });
  } catch {
    ctx.stderr.write(`error: agent server not reachable at 127.0.0.1:${port}\n`);
    return 1;
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page?): print it as a string.
  }
  ctx.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  const isRefused = typeof body === 'object' && body !== null && 'success' in body && body.success === false;
  return response.ok && !isRefused ? 0 : 1;
}
