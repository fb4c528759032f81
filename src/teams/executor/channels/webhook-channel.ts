import { z } from 'zod';
import { createSystemClock } from '../../../core/clock.js';
import { createDeadlineSignal } from '../../../core/deadline-signal.js';
import type { Channel, ChannelAvailability, ChannelGroup, ChannelRunResult } from '../channel.js';
import { parseLenientJson } from '../lenient-json.js';

/** Default limit of one webhook call. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 60_000;
const HEALTH_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_CHARS = 1_048_576;

const replySchema = z.object({
  success: z.boolean(),
  summary: z.string(),
  detail: z.string().optional(),
  error: z.string().optional(),
});

/** Settings of {@link createWebhookChannel}. */
export interface WebhookChannelOptions {
  readonly id: string;
  readonly description: string;
  /** Where tasks are POSTed (http or https). */
  readonly url: string;
  /** Optional readiness URL: ready iff it answers 2xx. */
  readonly healthUrl?: string;
  readonly group?: ChannelGroup;
  readonly timeoutMs?: number;
}

function failed(error: string): ChannelRunResult {
  return { success: false, summary: error, error, status: 'failed' };
}

/**
 * An HTTP webhook as a channel (group `openclaw`, unlimited): POSTs `{task_id, instruction,
 * session_key, conversation_id}` and expects a 2xx JSON `{success, summary, detail?, error?}`; anything
 * else fails the task. Cancel aborts the request.
 */
export function createWebhookChannel(options: WebhookChannelOptions): Channel {
  const inFlight = new Map<string, AbortController>();
  const clock = createSystemClock();
  return {
    id: options.id,
    kind: 'webhook',
    group: options.group ?? 'openclaw',
    concurrency: 'unlimited',
    description: options.description,
    async isAvailable(): Promise<ChannelAvailability> {
      if (options.healthUrl === undefined) return { ready: true, reasons: [] };
      try {
        const response = await fetch(options.healthUrl, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
        await response.body?.cancel();
        return response.ok
          ? { ready: true, reasons: [] }
          : { ready: false, reasons: [`health check answered ${response.status}`] };
      } catch (err) {
        return {
          ready: false,
          reasons: [`health check failed: ${err instanceof Error ? err.message : String(err)}`],
        };
      }
    },
    async run(task, run): Promise<ChannelRunResult> {
      const own = new AbortController();
      inFlight.set(task.id, own);
      using deadline = createDeadlineSignal({
        signals: [run.signal, own.signal],
        timeoutMs: options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
        clock,
      });
      const { signal } = deadline;
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            task_id: task.id,
            instruction: task.instruction,
            session_key: task.sessionKey,
            conversation_id: task.conversationId ?? null,
          }),
          signal,
        });
        const text = (await response.text()).slice(0, MAX_RESPONSE_CHARS);
        if (!response.ok) return failed(`webhook answered ${response.status}`);
        const reply = replySchema.safeParse(parseLenientJson(text));
        if (!reply.success) return failed('webhook reply is not {success, summary}');
        const { success, summary, detail, error } = reply.data;
        return {
          success,
          summary,
          ...(detail !== undefined && { detail }),
          ...(error !== undefined && { error }),
          ...(!success && { status: 'failed' as const }),
        };
      } catch (err) {
        if (run.signal.aborted || own.signal.aborted) return { ...failed('Cancelled'), status: 'cancelled' };
        return failed(
          signal.aborted
            ? 'Timed out'
            : `webhook failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      } finally {
        inFlight.delete(task.id);
      }
    },
    cancel(taskId): Promise<void> {
      inFlight.get(taskId)?.abort(new Error('cancelled'));
      return Promise.resolve();
    },
  };
}
