import type { Delivery } from '../../store/store.js';
import { igniteMessageOf } from '../bridging/index.js';
import { buildMime } from './mime/mime-build.js';
import { writeNewQueueFile } from './mime/queue-file-writer.js';
import type { MonitorContext } from './monitor-context.js';

/**
 * Materialises a bus message that another gateway addressed to an IGNITE agent as a `build`-format file
 * in the agent's queue root (spec/ignite.md 4.9): From = sender, To = agent, X-IGNITE-Type = envelope
 * type, priority, thread, and a YAML body (bridging/ignite-message.ts: a YAML mapping as it is, other text
 * as body field `message`). The file is then discovered and delivered like any other; the caller acks the
 * bus message once this resolves, so the file exists first (at-least-once: a crash in between writes it
 * again). Resolves the file's name.
 */
export async function materialiseForeign(
  ctx: MonitorContext,
  agent: string,
  delivery: Delivery,
): Promise<string> {
  const e = delivery.envelope;
  const message = igniteMessageOf(e);
  const type = message.type;
  const content = buildMime(
    { from: e.from, to: [agent], ...message },
    { nowMs: ctx.clock.now(), pid: ctx.pid },
  );
  const path = await writeNewQueueFile({
    dir: ctx.paths.agentRoot(agent),
    type,
    content,
    nowMs: ctx.preciseNow(),
  });
  const name = path.slice(path.lastIndexOf('/') + 1);
  ctx.markComplete(agent, name);
  ctx.publish('materialised', { agent, file: name, messageId: e.id, from: e.from });
  return name;
}
