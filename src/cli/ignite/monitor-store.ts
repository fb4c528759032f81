import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliContext } from '../cli-context.js';

const EVENT_PAGE = 10_000;

/**
 * The store URL the queue monitor of `runtimeDir` uses (runMonitor): the configured store when one is
 * named (--store, MUSUBI_STORE, --config or a musubi.yaml in the current directory), else
 * `sqlite:<rt>/state/bus.db`.
 */
export async function monitorStoreUrl(ctx: CliContext, runtimeDir: string): Promise<string> {
  const g = ctx.globalOptions();
  const isStoreNamed =
    g.store !== undefined ||
    (ctx.env['MUSUBI_STORE'] ?? '') !== '' ||
    g.config !== undefined ||
    existsSync(join(process.cwd(), 'musubi.yaml'));
  return isStoreNamed ? (await ctx.loadConfig()).store : `sqlite:${join(runtimeDir, 'state', 'bus.db')}`;
}

/**
 * Successful agent turns per agent, counted from the bus's event log (`gateway.ignite.delivered`, one
 * per turn that ended with exit 0) of the monitor's store: the files cannot tell, since agents delete
 * them. A store that lives in another process only (`memory:`) or cannot be opened gives null; a SQLite
 * file not created yet means nothing was delivered. The log keeps the most recent events only (100,000 by
 * default), so after very long runs the counts are a lower bound. Opens and closes the hub (no gateways).
 */
export async function deliveredCounts(
  ctx: CliContext,
  runtimeDir: string,
): Promise<ReadonlyMap<string, number> | null> {
  const [{ parseStoreUrl }, { openHub }, { createSystemClock }, { createIdGenerator }] = await Promise.all([
    import('../../hub/open-store.js'),
    import('../../hub/hub.js'),
    import('../../core/clock.js'),
    import('../../core/ids.js'),
  ]);
  try {
    const url = await monitorStoreUrl(ctx, runtimeDir);
    const location = parseStoreUrl(url, process.cwd());
    if (location.kind === 'memory') return null;
    if (location.kind === 'sqlite' && !existsSync(location.path)) return new Map();
    const config = await ctx.loadConfig();
    const clock = createSystemClock();
    const { bus, close } = await openHub({
      config: { ...config, store: url },
      cwd: process.cwd(),
      logger: ctx.logger(config),
      clock,
      ids: createIdGenerator(clock),
    });
    try {
      const counts = new Map<string, number>();
      for (let after = 0, page = EVENT_PAGE; page === EVENT_PAGE;) {
        const events = await bus.readEvents({ after, limit: EVENT_PAGE });
        page = events.length;
        after = events.at(-1)?.cursor ?? after;
        for (const e of events) {
          const agent = e.type === 'gateway.ignite.delivered' ? e.data['agent'] : undefined;
          if (typeof agent === 'string') counts.set(agent, (counts.get(agent) ?? 0) + 1);
        }
      }
      return counts;
    } finally {
      await close();
    }
  } catch {
    // Status only reports: an unreadable store (not reachable, wrong URL) means the counts are unknown.
    return null;
  }
}
