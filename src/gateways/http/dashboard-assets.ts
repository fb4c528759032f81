import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The files the dashboard consists of, by URL path; nothing else under the assets folder is served. */
export const DASHBOARD_FILES: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/theme.css': { file: 'theme.css', type: 'text/css; charset=utf-8' },
  '/layout.css': { file: 'layout.css', type: 'text/css; charset=utf-8' },
  '/agents.css': { file: 'agents.css', type: 'text/css; charset=utf-8' },
  '/teams.css': { file: 'teams.css', type: 'text/css; charset=utf-8' },
  '/log.css': { file: 'log.css', type: 'text/css; charset=utf-8' },
  '/side.css': { file: 'side.css', type: 'text/css; charset=utf-8' },
  '/stale.css': { file: 'stale.css', type: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/** One loaded asset. */
export interface DashboardAsset {
  readonly type: string;
  readonly body: Buffer;
}

/**
 * Where the built dashboard lives when no folder is given: `dist/dashboard/` beside the bundled CLI
 * (`dist/*.js`), or the repository's `dist/dashboard/` when running from source. Undefined when neither
 * exists (the page then answers 503 and says to run `npm run build`).
 */
export function defaultDashboardDir(moduleUrl: string = import.meta.url): string | undefined {
  const candidates = [new URL('./dashboard/', moduleUrl), new URL('../../../dist/dashboard/', moduleUrl)];
  return candidates.map((u) => fileURLToPath(u)).find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * Reads every dashboard file from `dir` into memory (they are small), so requests never touch the
 * file system and no request path ever reaches it. Resolves an empty map when `dir` is undefined or
 * lacks `index.html`.
 */
export async function loadDashboardAssets(dir: string | undefined): Promise<Map<string, DashboardAsset>> {
  const assets = new Map<string, DashboardAsset>();
  if (dir === undefined) return assets;
  for (const [path, { file, type }] of Object.entries(DASHBOARD_FILES)) {
    try {
      assets.set(path, { type, body: await readFile(join(dir, file)) });
    } catch (err) {
      // A missing optional file (favicon) is fine; a missing page is reported by the route as 503.
      if (!(err instanceof Error && 'code' in err && err.code === 'ENOENT')) throw err;
    }
  }
  return assets;
}
