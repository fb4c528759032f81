import type { Command } from 'commander';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';
import { writeJson } from '../output.js';

/** How long `musubi dashboard` waits for a hub to answer its health check. */
const PROBE_TIMEOUT_MS = 2_000;

/** True when a musubi HTTP gateway answers `GET <url>api/health` in time. */
async function answers(url: string, token: string | undefined): Promise<boolean> {
  try {
    const res = await fetch(new URL('api/health', url), {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      redirect: 'error',
    });
    const body: unknown = await res.json();
    return (
      res.ok && typeof body === 'object' && body !== null && 'service' in body && body.service === 'musubi'
    );
  } catch {
    return false; // nothing listens there, or something that is not a musubi hub
  }
}

/** The URL to print: with `?token=` when the gateway needs one and the config has it. */
function withToken(url: string, needsToken: boolean, token: string | undefined): string {
  return needsToken && token !== undefined ? `${url}?token=${encodeURIComponent(token)}` : url;
}

/** Candidate URLs in order: what a running hub wrote beside its store, then the configured address. */
async function candidates(
  config: Config,
): Promise<{ urls: { url: string; needsToken: boolean }[]; file: string }> {
  const [{ parseStoreUrl }, { readUrlFile, urlFilePath }] = await Promise.all([
    import('../../hub/open-store.js'),
    import('../../gateways/http/url-file.js'),
  ]);
  const store = parseStoreUrl(config.store, process.cwd());
  const file = urlFilePath({
    cwd: process.cwd(),
    ...(store.kind === 'sqlite' ? { sqliteFile: store.path } : {}),
  });
  const urls: { url: string; needsToken: boolean }[] = [];
  const written = await readUrlFile(file);
  if (written !== undefined) urls.push({ url: written.url, needsToken: written.needsToken });
  const http = config.gateways.http;
  if (http?.enabled === true) {
    const host = http.host.includes(':') && !http.host.startsWith('[') ? `[${http.host}]` : http.host;
    urls.push({ url: `http://${host}:${http.port}/`, needsToken: http.token !== undefined });
  }
  return { urls, file };
}

/**
 * Registers `musubi dashboard`: prints the dashboard URL of a running hub (it opens nothing). It reads
 * the URL file the hub's HTTP gateway left beside the store, then tries the configured address, and
 * prints the first one whose health check answers. GATEWAY_UNAVAILABLE (exit 1) when none does.
 */
export function registerDashboardCommands(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .description('print the dashboard URL of the running hub (opens nothing)')
    .option('--json', 'print {"url": ...} as one JSON line')
    .action(async (flags: { json?: boolean }) => {
      const config = await ctx.loadConfig();
      const token = config.gateways.http?.token;
      const { urls, file } = await candidates(config);
      for (const { url, needsToken } of urls) {
        if (!(await answers(url, needsToken ? token : undefined))) continue;
        const printed = withToken(url, needsToken, token);
        if (flags.json === true) writeJson(ctx.stdout, { url: printed });
        else ctx.stdout.write(`${printed}\n`);
        return;
      }
      const looked = [file, ...urls.map((u) => u.url)].join(', ');
      throw new MusubiError(
        'GATEWAY_UNAVAILABLE',
        `no running hub serves a dashboard here (looked at ${looked})`,
        {
          details: { looked },
        },
      );
    });
}
