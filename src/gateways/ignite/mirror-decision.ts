import { statSync } from 'node:fs';
import type { Delivery } from '../../store/store.js';
import { backoffMs, retryCountOf } from './failure-path.js';
import { MimeEditor } from './mime/mime-edit.js';
import { formatIsoLocal, parseTimestamp } from './mime/mime-time.js';
import type { MonitorContext } from './monitor-context.js';
import { editMessageFile, readHeaders } from './queue-file-io.js';
import { NOT_BEFORE_HEADER } from './queue-mirror.js';

/** What to do with a received mirror, decided from where its file is and its status. */
export type MirrorDecision =
  | { readonly kind: 'deliver'; readonly where: 'root' | 'processed' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'wait'; readonly untilMs: number }
  | { readonly kind: 'settle'; readonly why: string };

/**
 * True when `path` is a regular file. Synchronous on purpose, like queue-file-io.ts: a stat of a local
 * file is cheaper than a thread-pool hop.
 */
export const isFile = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isFile() === true;

/**
 * Decides what the agent worker does with the mirror of queue file `name` of `agent` (spec/ignite.md
 * 4.3-4.8), from where the file is and its X-IGNITE-Status: a file in the agent's root is delivered; one in
 * processed/ is delivered when `retrying` and due, waited for when `retrying` and not due yet, expired
 * when it was claimed and never settled (no status, `processing` or `queued`), and otherwise (file gone,
 * final status) the mirror is settled without delivery. A retrying file without a usable
 * Next-Retry-After gets one written (now + backoff), so later decisions keep the same time.
 */
export async function decideMirror(
  ctx: MonitorContext,
  agent: string,
  name: string,
  delivery: Delivery,
): Promise<MirrorDecision> {
  const { paths, clock } = ctx;
  if (isFile(`${paths.agentRoot(agent)}/${name}`)) return { kind: 'deliver', where: 'root' };
  const path = `${paths.processed(agent)}/${name}`;
  let headers: ReadonlyMap<string, string>;
  try {
    headers = await readHeaders(path);
  } catch {
    return { kind: 'settle', why: 'file gone' };
  }
  const status = headers.get('X-IGNITE-Status') ?? '';
  if (status === 'retrying') {
    const notBefore = Number(delivery.envelope.headers[NOT_BEFORE_HEADER] ?? NaN);
    let due = Number.isFinite(notBefore)
      ? notBefore
      : parseTimestamp(headers.get('X-IGNITE-Next-Retry-After') ?? '');
    if (due === null) {
      // Missing or unparsable Next-Retry-After means "now + backoff" (spec 4.8); written down so it holds.
      const s = ctx.settings();
      due = clock.now() + backoffMs(retryCountOf(headers), s.retryBaseMs, s.retryMaxMs, ctx.random);
      const value = formatIsoLocal(due);
      await editMessageFile(path, (text) =>
        new MimeEditor(text).setHeader('X-IGNITE-Next-Retry-After', value).toString(),
      ).catch(() => undefined);
    }
    return due > clock.now() ? { kind: 'wait', untilMs: due } : { kind: 'deliver', where: 'processed' };
  }
  if (status === '' || status === 'processing' || status === 'queued') return { kind: 'expired' };
  return { kind: 'settle', why: `status ${status}` };
}
