import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';
import { writeJson } from '../output.js';

/** How long `musubi dashboard` waits for a hub to answer. */
const PROBE_TIMEOUT_MS = 2_000;

/** A place a hub may serve its dashboard, and whether it said it needs a token. */
interface Candidate {
  readonly url: string;
  readonly needsToken: boolean;
}

/** How a candidate answered: not a musubi hub, a hub that took the token (or needs none), or refused it. */
type Probe = 'absent' | 'ok' | 'unauthorized';

/** Asks `<url>api/health` (public) and, with a token, a guarded route, so a wrong token is told apart. */
async function probe(url: string, token: string | undefined): Promise<Probe> {
  const ask = (path: string): Promise<Response> =>
    fetch(new URL(path, url), {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      redirect: 'error',
    });
  try {
    const health = await ask('api/health');
    const body: unknown = await health.json();
    const isHub =
      health.ok &&
      typeof body === 'object' &&
      body !== null &&
      'service' in body &&
      body.service === 'musubi';
    if (!isHub) return 'absent';
    const guarded = await ask('api/agents');
    await guarded.body?.cancel();
    return guarded.status === 401 ? 'unauthorized' : 'ok';
  } catch {
    return 'absent'; // nothing listens there, or something that is not a musubi hub
  }
}

/** Candidate URLs in order: what a running hub wrote beside its store, then the configured address. */
async function candidates(config: Config): Promise<{ urls: Candidate[]; file: string }> {
  const [{ parseStoreUrl }, { readUrlFile, urlFilePath }] = await Promise.all([
    import('../../hub/open-store.js'),
    import('../../gateways/http/url-file.js'),
  ]);
  const store = parseStoreUrl(config.store, process.cwd());
  const file = urlFilePath({
    cwd: process.cwd(),
    ...(store.kind === 'sqlite' ? { sqliteFile: store.path } : {}),
  });
  const urls: Candidate[] = [];
  const written = await readUrlFile(file);
  if (written !== undefined) urls.push({ url: written.url, needsToken: written.needsToken });
  const http = config.gateways.http;
  if (http?.enabled === true) {
    const host = http.host.includes(':') && !http.host.startsWith('[') ? `[${http.host}]` : http.host;
    urls.push({ url: `http://${host}:${http.port}/`, needsToken: http.auth === 'token' });
  }
  return { urls, file };
}

/**
 * The token of the hub at `url`: the configured one, else what that hub left in this user's token
 * folder (only when the file names the same URL: a file of an earlier hub on the port is not used).
 */
async function tokenFor(url: string, config: Config, ctx: CliContext): Promise<string | undefined> {
  const configured = config.gateways.http?.token;
  if (configured !== undefined) return configured;
  const { hubTokenDir, hubTokenPath, readHubTokenFile } = await import('../../gateways/http/hub-token.js');
  const port = Number(new URL(url).port);
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const record = await readHubTokenFile(hubTokenPath(hubTokenDir(ctx.env), port));
  return record?.url === url ? record.token : undefined;
}

/** Opens `url` in the desktop's browser (argv, never a shell); resolves false when no opener runs. */
function openInBrowser(url: string): Promise<boolean> {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  return new Promise((resolve) => {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

/** The first candidate that answers as a musubi hub, with the URL to print; throws when none does. */
async function findDashboard(config: Config, ctx: CliContext): Promise<string> {
  const { urls, file } = await candidates(config);
  let refused: string | undefined;
  for (const { url, needsToken } of urls) {
    const token = needsToken ? await tokenFor(url, config, ctx) : undefined;
    const answer = await probe(url, token);
    if (answer === 'ok') return token === undefined ? url : `${url}?token=${encodeURIComponent(token)}`;
    if (answer === 'unauthorized') refused ??= url;
  }
  if (refused !== undefined) {
    throw new MusubiError(
      'GATEWAY_UNAUTHORIZED',
      `the hub at ${refused} needs its token, and this user has no token for it: run this as the user ` +
        'who started the hub (its token is in that user’s token folder), or set gateways.http.token',
      { details: { url: refused } },
    );
  }
  const looked = [file, ...urls.map((u) => u.url)].join(', ');
  throw new MusubiError(
    'GATEWAY_UNAVAILABLE',
    `no running hub serves a dashboard here (looked at ${looked})`,
    {
      details: { looked },
    },
  );
}

/**
 * Registers `musubi dashboard`: prints the dashboard URL of a running hub, with its token, and opens it
 * with `--open`. It reads the URL file the hub's HTTP gateway left beside the store, then tries the
 * configured address; the token comes from the config or the hub's token file in this user's token
 * folder. GATEWAY_UNAVAILABLE (exit 1) when no hub answers, GATEWAY_UNAUTHORIZED when one answers but
 * this user has no token for it.
 */
export function registerDashboardCommands(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .description('print the dashboard URL of the running hub, with its token (--open opens it)')
    .option('--json', 'print {"url": ...} as one JSON line')
    .option('--open', 'open the URL in the desktop browser too')
    .action(async (flags: { json?: boolean; open?: boolean }) => {
      const url = await findDashboard(await ctx.loadConfig(), ctx);
      if (flags.json === true) writeJson(ctx.stdout, { url });
      else ctx.stdout.write(`${url}\n`);
      if (flags.open === true && !(await openInBrowser(url))) {
        ctx.stderr.write(
          'musubi: no browser opener (xdg-open) on this machine; open the URL above yourself\n',
        );
      }
    });
}
