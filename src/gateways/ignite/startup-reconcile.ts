import { readdir } from 'node:fs/promises';
import type { MonitorContext } from './monitor-context.js';
import { parseTimestamp } from './mime/mime-time.js';
import { readHeaders, readMessageFile } from './queue-file-io.js';
import { mirrorEnvelope } from './queue-mirror.js';

/** Statuses of a file in processed/ that still needs the monitor (spec/ignite.md 4.8). */
const UNSETTLED = new Set(['', 'processing', 'queued', 'retrying']);

/**
 * Start-up reconciliation of one agent (spec/ignite.md 4.8): loads the live bus mirrors; a retrying file
 * gets its move-back timer; a file in processed/ that is unsettled (processing, no status, retrying) but
 * has no live mirror — a fresh store, or a mirror the bus dead-lettered on its own — is mirrored again,
 * so it is received at once and goes down the retry path with its own jittered backoff (processing) or
 * waits for its Next-Retry-After (retrying). Delivered, completed and other files are left alone.
 * Resolves how many files were mirrored again.
 */
export async function reconcileAgent(ctx: MonitorContext, agent: string): Promise<number> {
  for (const m of await ctx.mirror.load(agent)) {
    if (m.state === 'delayed') ctx.scheduleMoveBack(agent, m.name, m.availableAt);
  }
  const processed = ctx.paths.processed(agent);
  const names = (await readdir(processed).catch(() => [])).filter(
    (n) => !n.startsWith('.') && n.endsWith('.mime'),
  );
  let remirrored = 0;
  for (const name of names) {
    if (ctx.mirror.has(agent, name)) continue;
    const headers = await readHeaders(`${processed}/${name}`).catch(() => null);
    const status = headers?.get('X-IGNITE-Status') ?? '';
    if (headers === null || !UNSETTLED.has(status)) {
      if (headers !== null && status !== 'delivered' && status !== 'completed') {
        ctx.logger.info({ agent, file: name, status }, 'file in processed/ with an unknown status; ignored');
      }
      continue;
    }
    const file = await readMessageFile(`${processed}/${name}`).catch(() => null);
    if (file === null) continue;
    await ctx.mirror.add({ ...mirrorEnvelope(agent, name, file.message, ctx.clock.now()), to: agent }, name);
    if (status === 'retrying') {
      const due = parseTimestamp(headers.get('X-IGNITE-Next-Retry-After') ?? '') ?? ctx.clock.now();
      ctx.scheduleMoveBack(agent, name, due);
    }
    remirrored++;
  }
  if (remirrored > 0)
    ctx.logger.info({ agent, remirrored }, 'in-flight messages from before the restart queued for retry');
  return remirrored;
}
