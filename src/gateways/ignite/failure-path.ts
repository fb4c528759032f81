import { unlink } from 'node:fs/promises';
import { backoffDelayMs } from '../../bus/retry-policy.js';
import { isMusubiError } from '../../core/errors.js';
import type { Delivery } from '../../store/store.js';
import { BodyFields } from './body-fields.js';
import { deadLetterBody, escalationBody, failureReason, type FailureKind } from './dead-letter-bodies.js';
import { createFileExclusive } from './mime/atomic-file.js';
import { buildMime } from './mime/mime-build.js';
import { MimeEditor } from './mime/mime-edit.js';
import { formatIsoLocal } from './mime/mime-time.js';
import { cutToBytes, NAME_MAX_BYTES } from './mime/queue-file-name.js';
import { writeNewQueueFile } from './mime/queue-file-writer.js';
import type { MonitorContext } from './monitor-context.js';
import { editMessageFile, readMessageFile, type MessageFile } from './queue-file-io.js';
import { FILE_HEADER, NOT_BEFORE_HEADER } from './queue-mirror.js';

/** Envelope header carrying the retry count across re-sends (for files that cannot carry the header). */
const RETRIES_HEADER = 'ignite-retries';

/** The retry count of a claimed file: its `X-IGNITE-Retry-Count` header (deviation 6), else 0. */
export function retryCountOf(headers: ReadonlyMap<string, string>): number {
  const raw = headers.get('X-IGNITE-Retry-Count') ?? '';
  return /^\d{1,6}$/.test(raw) ? Number(raw) : 0;
}

/**
 * The backoff after `n` retries (spec/ignite.md 4.6): uniform in [0, min(max, base·2^n)], the bus's
 * full-jitter policy for attempt n + 1 — in whole seconds when both settings are whole seconds (the
 * spec's integers), else in whole milliseconds (short test settings).
 */
export function backoffMs(n: number, baseMs: number, maxMs: number, random: () => number): number {
  const stepMs = baseMs % 1000 === 0 && maxMs % 1000 === 0 ? 1000 : 1;
  return backoffDelayMs({ baseMs, capMs: maxMs }, n + 1, random, { stepMs });
}

async function settleBus(
  ctx: MonitorContext,
  op: () => Promise<unknown>,
  what: string,
  delivery: Delivery,
): Promise<void> {
  try {
    await op();
  } catch (err) {
    // A lease that ended meanwhile: the bus re-offers the message and the file state decides then.
    if (!isMusubiError(err, 'LEASE_EXPIRED') && !isMusubiError(err, 'NOT_FOUND')) throw err;
    ctx.logger.warn({ messageId: delivery.envelope.id, err }, `bus ${what} after the lease ended`);
  }
}

async function writeDeadLetterEntry(
  ctx: MonitorContext,
  name: string,
  content: string,
  nowMs: number,
): Promise<string> {
  const base = name.replace(/\.mime$/, '').replace(/\.yaml$/, '');
  for (let epoch = Math.floor(nowMs / 1000); ; epoch++) {
    const suffix = `_dlq_${String(epoch).padStart(10, '0')}.mime`;
    // A base too long for NAME_MAX is cut (the entry's body keeps the full original name).
    const file = `${cutToBytes(base, NAME_MAX_BYTES - suffix.length)}${suffix}`;
    if (await createFileExclusive(`${ctx.paths.deadLetter}/${file}`, content)) return file;
  }
}

async function deadLetter(
  ctx: MonitorContext,
  agent: string,
  name: string,
  file: MessageFile,
  delivery: Delivery,
  kind: FailureKind,
  n: number,
): Promise<void> {
  const s = ctx.settings();
  const now = ctx.clock.now();
  const fields = new BodyFields(file.message.body);
  const reason = failureReason(kind, s.dlqMaxRetries);
  const writer = { nowMs: now, pid: ctx.pid };
  const common = { from: 'queue_monitor', to: ['leader'], priority: 'critical' } as const;
  const entry = buildMime(
    {
      ...common,
      type: 'dead_letter',
      status: 'dead_letter',
      body: deadLetterBody({
        originalFile: name,
        retryCount: n,
        maxRetries: s.dlqMaxRetries,
        reason,
        movedAt: formatIsoLocal(now),
        original: file.text,
      }),
    },
    writer,
  );
  const escalation = buildMime(
    {
      ...common,
      type: 'escalation',
      status: 'queued',
      body: escalationBody({
        taskId: fields.get('task_id'),
        title: fields.get('title'),
        originalAssignee: file.message.headers.get('To') ?? '',
        reason,
        retryCount: n,
        maxRetries: s.dlqMaxRetries,
        dlqPath: `${ctx.paths.deadLetter}/`,
      }),
    },
    writer,
  );
  const dlqFile = await writeDeadLetterEntry(ctx, name, entry, now);
  const escalationPath = await writeNewQueueFile({
    dir: ctx.paths.agentRoot('leader'),
    type: 'escalation',
    content: escalation,
    nowMs: ctx.preciseNow(),
  });
  const escalationFile = escalationPath.slice(escalationPath.lastIndexOf('/') + 1);
  ctx.markComplete('leader', escalationFile);
  await unlink(`${ctx.paths.processed(agent)}/${name}`).catch(() => undefined);
  await settleBus(ctx, () => ctx.bus.deadLetter(delivery.deliveryId, reason), 'dead-letter', delivery);
  ctx.mirror.settle(agent, name);
  ctx.logger.warn(
    { agent, file: name, reason, dlqFile, escalationFile },
    `[DLQ] デッドレターへ移動: ${name} (${reason})`,
  );
  ctx.publish('dead_lettered', { agent, file: name, reason, retryCount: n, dlqFile, escalationFile });
}

/**
 * The retry path after a failed or timed-out attempt (spec/ignite.md 4.6, 4.7). n = the file's
 * Retry-Count header; n >= DLQ_MAX_RETRIES dead-letters it with an escalation to the leader; otherwise the
 * retry headers are written (F4 shape), the bus message is nacked for the backoff (or re-sent under a
 * new id when the bus's own attempt limit would dead-letter it), and the file moves back when due.
 * A file that is gone (the agent deleted it) only settles the bus message.
 */
export async function handleFailure(
  ctx: MonitorContext,
  agent: string,
  name: string,
  delivery: Delivery,
  kind: FailureKind,
): Promise<void> {
  const path = `${ctx.paths.processed(agent)}/${name}`;
  let file: MessageFile;
  try {
    file = await readMessageFile(path);
  } catch {
    ctx.logger.warn(
      { agent, file: name, kind },
      'failed turn, but the message file is gone; nothing to retry',
    );
    await settleBus(ctx, () => ctx.bus.ack(delivery.deliveryId), 'ack', delivery);
    ctx.mirror.settle(agent, name);
    return;
  }
  // An unreadable (non-UTF-8) file cannot carry the header, so the bus's attempt count stands in.
  const carried = Number(delivery.envelope.headers[RETRIES_HEADER] ?? '0') || 0;
  const n = file.isReadable
    ? retryCountOf(file.message.headers)
    : carried + Math.max(0, delivery.envelope.attempt - 1);
  const s = ctx.settings();
  if (n >= s.dlqMaxRetries) return deadLetter(ctx, agent, name, file, delivery, kind, n);
  const now = ctx.clock.now();
  const waitMs = backoffMs(n, s.retryBaseMs, s.retryMaxMs, ctx.random);
  if (file.isReadable) {
    await editMessageFile(path, (text) =>
      new MimeEditor(text)
        .removeHeader('X-IGNITE-Error-Reason')
        .removeHeader('X-IGNITE-Error-At')
        .setStatus('retrying')
        .setHeaders([
          { name: 'X-IGNITE-Retry-Count', value: String(n + 1) },
          { name: 'X-IGNITE-Last-Retry-At', value: formatIsoLocal(now) },
          { name: 'X-IGNITE-Next-Retry-After', value: formatIsoLocal(now + waitMs) },
        ])
        .toString(),
    );
  }
  ctx.logger.info(
    { agent, file: name, kind, retry: n + 1, backoffMs: waitMs },
    `[RETRY] リトライ処理: ${name} (試行: ${n + 1}, バックオフ: ${waitMs / 1000}秒)`,
  );
  if (delivery.envelope.attempt < ctx.busMaxAttempts) {
    await settleBus(
      ctx,
      () => ctx.bus.nack(delivery.deliveryId, { delayMs: waitMs, reason: kind }),
      'nack',
      delivery,
    );
  } else {
    // The bus would dead-letter on its own limit; IGNITE counts retries in the file, so re-send.
    await settleBus(ctx, () => ctx.bus.ack(delivery.deliveryId), 'ack', delivery);
    const { id: _old, attempt: _attempt, ...rest } = delivery.envelope;
    const headers = {
      ...rest.headers,
      [FILE_HEADER]: name,
      [NOT_BEFORE_HEADER]: String(now + waitMs),
      [RETRIES_HEADER]: String(n + 1),
    };
    const sent = await ctx.bus.send({
      ...rest,
      id: `${delivery.envelope.id.replace(/\.r\d+$/, '')}.r${n + 1}`,
      headers,
    });
    ctx.mirror.set(agent, name, sent.envelope.id);
  }
  ctx.scheduleMoveBack(agent, name, now + waitMs);
  ctx.publish('retrying', { agent, file: name, kind, retryCount: n + 1, backoffMs: waitMs });
}
