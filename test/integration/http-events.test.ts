import { afterEach, describe, expect, it } from 'vitest';
import { startHttpHub, type HttpHub } from '../fixtures/http-hub.js';
import { openSse, type SseConnection, type SseEvent } from '../fixtures/sse-client.js';

const hubs: HttpHub[] = [];
const streams: SseConnection[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

async function hub(): Promise<HttpHub> {
  const h = await startHttpHub();
  hubs.push(h);
  return h;
}

async function sse(url: string, headers?: Record<string, string>): Promise<SseConnection> {
  const s = await openSse(url, headers);
  streams.push(s);
  return s;
}

/** The next bus event (skipping the `ready` event) as parsed JSON. */
async function nextBusEvent(
  s: SseConnection,
): Promise<SseEvent & { json: { type: string; cursor: number; messageId?: string } }> {
  for (;;) {
    const e = await s.next();
    if (e.event === 'ready') continue;
    return { ...e, json: JSON.parse(e.data) as { type: string; cursor: number; messageId?: string } };
  }
}

describe('http gateway - server-sent events', () => {
  it('starts at the newest event and streams new ones with the cursor as id', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'b', type: 'before' });
    const s = await sse(`${h.base}/api/events`);
    expect(s.status).toBe(200);
    const ready = await s.next();
    expect(ready.event).toBe('ready');
    const { envelope } = await h.bus.send({ from: 'a', to: 'b', type: 'after' });
    const e = await nextBusEvent(s);
    expect(e.json).toMatchObject({ type: 'message.sent', messageId: envelope.id, messageType: 'after' });
    expect(e.id).toBe(String(e.json.cursor));
  });

  it('resumes from Last-Event-ID after a dropped connection with no event lost or repeated', async () => {
    const h = await hub();
    const first = await sse(`${h.base}/api/events?after=0`);
    const sent: string[] = [];
    for (let i = 0; i < 5; i++)
      sent.push((await h.bus.send({ from: 'a', to: 'b', type: `m${i}` })).envelope.id);
    const seen: { id: string; messageId: string | undefined }[] = [];
    for (let i = 0; i < 3; i++) {
      const e = await nextBusEvent(first);
      seen.push({ id: e.id ?? '', messageId: e.json.messageId });
    }
    first.close(); // the tab goes away mid-stream
    for (let i = 5; i < 10; i++)
      sent.push((await h.bus.send({ from: 'a', to: 'b', type: `m${i}` })).envelope.id);
    const lastId = seen.at(-1)?.id ?? '';
    const second = await sse(`${h.base}/api/events`, { 'last-event-id': lastId });
    for (let i = 3; i < 10; i++) {
      const e = await nextBusEvent(second);
      seen.push({ id: e.id ?? '', messageId: e.json.messageId });
    }
    expect(seen.map((s) => s.messageId)).toEqual(sent);
    const ids = seen.map((s) => Number(s.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(10);
  });

  it('prefers Last-Event-ID over ?after= and rejects a malformed one with 400', async () => {
    const h = await hub();
    const a = await h.bus.send({ from: 'a', to: 'b', type: 'one' });
    await h.bus.send({ from: 'a', to: 'b', type: 'two' });
    const [firstEvent] = await h.bus.readEvents();
    const s = await sse(`${h.base}/api/events?after=0`, { 'last-event-id': String(firstEvent?.cursor) });
    const e = await nextBusEvent(s);
    expect(e.json).toMatchObject({ messageType: 'two' });
    expect(a.envelope.id).not.toBe(e.json.messageId);
    const bad = await fetch(`${h.base}/api/events`, { headers: { 'last-event-id': '12\r\nevil' } }).catch(
      () => undefined,
    );
    if (bad !== undefined) expect(bad.status).toBe(400);
    const bad2 = await fetch(`${h.base}/api/events`, { headers: { 'last-event-id': 'abc' } });
    expect(bad2.status).toBe(400);
    expect(((await bad2.json()) as { code: string }).code).toBe('GATEWAY_FRAME_INVALID');
  });

  it('starts over at the newest event when the client is ahead of the log (a replaced store)', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'b', type: 'one' });
    const s = await sse(`${h.base}/api/events`, { 'last-event-id': '999999' });
    const ready = await s.next();
    expect(ready.event).toBe('ready');
    expect(JSON.parse(ready.data)).toEqual({
      cursor: (await h.bus.readEvents()).at(-1)?.cursor,
      isReset: true,
    });
    await h.bus.send({ from: 'a', to: 'b', type: 'two' });
    expect((await nextBusEvent(s)).json).toMatchObject({ messageType: 'two' });
  });

  it('ends open streams when the gateway stops', async () => {
    const h = await hub();
    const s = await sse(`${h.base}/api/events`);
    await s.next();
    await h.gateway.stop();
    expect(await s.ended()).toBe(true);
  });

  it('keeps serving after a client leaves, and streams to several clients at once', async () => {
    const h = await hub();
    const leaving = await sse(`${h.base}/api/events`);
    await leaving.next();
    leaving.close();
    const [x, y] = [await sse(`${h.base}/api/events`), await sse(`${h.base}/api/events`)];
    await Promise.all([x.next(), y.next()]);
    await h.bus.publish({ type: 'agent.status_changed', data: { name: 'alice', state: 'busy' } });
    const [ex, ey] = await Promise.all([nextBusEvent(x), nextBusEvent(y)]);
    expect(ex.json.type).toBe('agent.status_changed');
    expect(ey.id).toBe(ex.id);
  });
});
