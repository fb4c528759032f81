import { MusubiError } from '../../core/errors.js';
import { DASHBOARD_FILES, type DashboardAsset } from './dashboard-assets.js';
import type { RouteContext } from './route-context.js';

/**
 * The page's security headers: scripts, styles and connections only from this origin (no inline
 * script, no CDN), no framing, no referrer. Fixed strings, never built from request data.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
} as const;

/**
 * `GET /` and the other {@link DASHBOARD_FILES} (script, style sheets, icon): the dashboard, from memory. Without built assets
 * `GET /` answers GATEWAY_UNAVAILABLE (503) naming `npm run build`.
 */
export function registerStaticRoutes(ctx: RouteContext, assets: ReadonlyMap<string, DashboardAsset>): void {
  for (const path of Object.keys(DASHBOARD_FILES)) {
    ctx.app.get(path, async (_request, reply) => {
      const asset = assets.get(path);
      if (asset === undefined) {
        if (path === '/') {
          throw new MusubiError('GATEWAY_UNAVAILABLE', 'the dashboard is not built; run `npm run build`');
        }
        throw new MusubiError('NOT_FOUND', `no ${path}`);
      }
      return reply.headers(PAGE_HEADERS).type(asset.type).send(asset.body);
    });
  }
}
