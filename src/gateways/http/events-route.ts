import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';
import { lastEventCursor } from './event-tail.js';
import { publicEvent } from './message-rows.js';
import { cursorParam, parseInput, parseQuery } from './query-schemas.js';
import type { RouteContext } from './route-context.js';
import { SseStream } from './sse-stream.js';

/** Limits of the event stream route. */
export interface EventStreamLimits {
  readonly heartbeatMs: number;
  readonly slowClientMs: number;
  /** Concurrent streams; one more is refused with GATEWAY_UNAVAILABLE (503). */
  readonly maxStreams: number;
  /** Reconnection delay suggested to browsers. */
  readonly retryMs: number;
}

const querySchema = z.object({ after: cursorParam.optional() });

/**
 * `GET /api/events`: the bus event log as server-sent events, one event per stored bus event, with the
 * event's cursor as SSE `id` and the event as JSON `data` (SSE type `message`). It starts after the
 * `Last-Event-ID` header, else after `?after=`, else at the newest event, so a reconnecting client
 * replays everything it missed. A first `ready` event (no id) carries `{ cursor, isReset }`: the
 * starting cursor, and whether the client's cursor was ahead of the log (a different log, e.g. a
 * restarted memory store), in which case the stream starts at the newest event and the client should
 * reload its snapshots. The stream
 * follows the log until the client leaves or the gateway stops; `streams` holds the open ones.
 */
export function registerEventsRoute(
  ctx: RouteContext,
  streams: Set<SseStream>,
  limits: EventStreamLimits,
): void {
  const log = ctx.logger;
  ctx.app.get('/api/events', async (request, reply) => {
    const query = parseQuery(querySchema, request.query);
    const lastEventId = request.headers['last-event-id'];
    const resume =
      typeof lastEventId === 'string' && lastEventId !== ''
        ? parseInput(cursorParam, lastEventId, 'Last-Event-ID')
        : query.after;
    if (streams.size >= limits.maxStreams) {
      throw new MusubiError('GATEWAY_UNAVAILABLE', `too many event streams (${limits.maxStreams})`);
    }
    // A client ahead of the log saw another log (a memory store before a restart): it starts over.
    const tail = await lastEventCursor(ctx.bus);
    const isReset = resume !== undefined && resume > tail;
    const after = resume === undefined || isReset ? tail : resume;
    reply.hijack();
    const stream = new SseStream({
      response: reply.raw,
      clock: ctx.clock,
      heartbeatMs: limits.heartbeatMs,
      slowClientMs: limits.slowClientMs,
    });
    streams.add(stream);
    try {
      stream.open();
      const ready = JSON.stringify({ cursor: after, isReset });
      await stream.send({ event: 'ready', data: ready, retryMs: limits.retryMs });
      for await (const event of ctx.bus.events({ after, signal: stream.signal })) {
        await stream.send({ id: String(event.cursor), data: JSON.stringify(publicEvent(event)) });
      }
    } catch (err) {
      // The response is hijacked: nothing can be sent any more, so the stream just ends.
      if (!stream.signal.aborted) log.warn({ err }, 'event stream failed');
    } finally {
      stream.close();
      streams.delete(stream);
    }
  });
}
