import { createHash } from 'node:crypto';
import type { Delivery } from '../../store/store.js';
import { updateStatusText } from './mime/mime-edit.js';
import type { ParsedMime } from './mime/mime-parse.js';
import { formatIsoLocal } from './mime/mime-time.js';
import { IgnitePaths } from './ignite-paths.js';
import type { MonitorContext } from './monitor-context.js';
import { claimByRename, editMessageFile, readMessageFile } from './queue-file-io.js';
import { FILE_HEADER, mirrorEnvelope, mirrorIdOf } from './queue-mirror.js';

/** Envelope header of a handed-off file: its name, under another key than `ignite-file` so no worker claims it. */
export const HANDED_OFF_HEADER = 'ignite-handed-off-file';

const isSafeName = (name: string): boolean => {
  try {
    IgnitePaths.queueFileName(name);
    return true;
  } catch {
    // A name that would leave the queue folder: the message is passed on as plain mail instead.
    return false;
  }
};

const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * Hands one queue file of an agent attached through another gateway to the agent's mailbox
 * (docs/bridging.md): the envelope the file mirrors to, without `ignite-file`, under an id fixed by the
 * file (a repeat after a crash is a bus duplicate); then the file moves from `where` into processed/
 * marked `delivered`, since the bus delivers it from here. Call it in the agent's lane.
 */
export async function handOffFile(
  ctx: MonitorContext,
  agent: string,
  file: { readonly name: string; readonly message: ParsedMime; readonly where: 'root' | 'processed' },
): Promise<void> {
  const { name } = file;
  const envelope = mirrorEnvelope(agent, name, file.message, ctx.clock.now());
  const { [FILE_HEADER]: _file, ...headers } = envelope.headers ?? {};
  const base = mirrorIdOf(agent, name, file.message.headers.get('Message-ID'));
  await ctx.bus.send({
    ...envelope,
    id: `${base}.${digest(name)}`,
    headers: { ...headers, [HANDED_OFF_HEADER]: name },
  });
  const processed = ctx.paths.processed(agent);
  if (file.where === 'root' && !(await claimByRename(ctx.paths.agentRoot(agent), processed, name))) return;
  const processedAt = formatIsoLocal(ctx.clock.now());
  await editMessageFile(`${processed}/${name}`, (text) =>
    updateStatusText(text, 'delivered', { processedAt }),
  ).catch((err: unknown) =>
    ctx.logger.warn({ agent, file: name, err }, 'handed-off file not marked delivered'),
  );
  ctx.publish('handed_off', { agent, file: name, messageId: base });
}

/**
 * A message this agent's worker claimed although the agent is attached elsewhere (it attached while the
 * worker waited): a mirrored file is handed off as above; other mail is sent again under a new id for
 * the gateway the agent is attached through. The caller then acks the claimed delivery.
 */
export async function handOffDelivery(ctx: MonitorContext, agent: string, delivery: Delivery): Promise<void> {
  const name = delivery.envelope.headers[FILE_HEADER];
  if (name === undefined || !isSafeName(name)) {
    const { id, attempt: _attempt, ...rest } = delivery.envelope;
    await ctx.bus.send({ ...rest, id: `${id.slice(0, 100)}.h${digest(id)}` });
  } else {
    for (const where of ['root', 'processed'] as const) {
      const dir = where === 'root' ? ctx.paths.agentRoot(agent) : ctx.paths.processed(agent);
      const found = await readMessageFile(`${dir}/${name}`).catch(() => null);
      if (found === null) continue;
      await handOffFile(ctx, agent, { name, message: found.message, where });
      break;
    }
    ctx.mirror.settle(agent, name);
  }
}
