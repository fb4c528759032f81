import type { Delivery } from '../../store/store.js';
import { isSendableType } from './agent-names.js';
import { hasLineBreak, toLf } from './mime/header-text.js';
import { buildMime } from './mime/mime-build.js';
import { writeNewQueueFile } from './mime/queue-file-writer.js';
import type { MonitorContext } from './monitor-context.js';

/**
 * Materialises a bus message that another gateway addressed to an IGNITE agent as a `build`-format file
 * in the agent's queue root (spec/ignite.md 4.9): From = sender, To = agent, X-IGNITE-Type = envelope
 * type, priority, thread, body = the envelope body. The file is then discovered and delivered like any
 * other; the bus message is acked once the file exists (at-least-once: a crash in between writes it again).
 */
export async function materialiseForeign(
  ctx: MonitorContext,
  agent: string,
  delivery: Delivery,
): Promise<string> {
  const e = delivery.envelope;
  const type = isSendableType(e.type) && !hasLineBreak(e.type) ? e.type : 'message';
  const content = buildMime(
    {
      from: e.from,
      to: [agent],
      type,
      priority: e.priority,
      body: toLf(e.body),
      ...(e.thread !== undefined && !hasLineBreak(e.thread) ? { threadId: e.thread } : {}),
    },
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
  await ctx.bus.ack(delivery.deliveryId);
  ctx.publish('materialised', { agent, file: name, messageId: e.id, from: e.from });
  return name;
}
