// HTTP gateway dead letters: listing, retry, discard, and the guards on DELETE /api/dead-letters/{id}.
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpHub } from '../fixtures/http-hub.js';
import { getJson, httpHubSession, rawGet } from '../fixtures/http-hub-session.js';

const { start: hub, close } = httpHubSession();
afterEach(close);

/** Sends `id` to each mailbox and dead-letters it there. */
async function deadLetters(h: HttpHub, id: string, mailboxes: readonly string[]): Promise<void> {
  for (const to of mailboxes) {
    await h.bus.send({ from: 'a', to, type: 'job', id });
    const d = await h.bus.receive(to, { timeoutMs: 0 });
    await h.bus.deadLetter(d?.deliveryId ?? '', 'boom');
  }
}

describe('http gateway - REST', () => {
  it('lists dead letters and retries one back into its mailbox', async () => {
    const h = await hub();
    const { envelope } = await h.bus.send({ from: 'a', to: 'worker', type: 'job' });
    const d = await h.bus.receive('worker', { timeoutMs: 0 });
    await h.bus.nack(d?.deliveryId ?? '', { reason: 'boom' });
    const listed = (await getJson(`${h.base}/api/dead-letters`)).body.deadLetters;
    expect(listed).toEqual([
      expect.objectContaining({
        mailbox: 'worker',
        reason: 'boom',
        envelope: expect.objectContaining({ id: envelope.id }),
      }),
    ]);
    const retry = await fetch(`${h.base}/api/dead-letters/${envelope.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ requeued: [{ mailbox: 'worker', messageId: envelope.id }] });
    expect((await h.bus.count('worker')).ready).toBe(1);
    const again = await getJson(`${h.base}/api/dead-letters/${envelope.id}/retry`, { method: 'POST' });
    expect(again).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
  });

  it('discards the dead letters of an id in every mailbox; 404 when none, 400 for a malformed id', async () => {
    const h = await hub();
    await deadLetters(h, 'job-1', ['worker', 'checker']);
    await deadLetters(h, 'job-2', ['worker']);
    await h.bus.send({ from: 'a', to: 'worker', type: 'job', id: 'live' });
    const discard = await fetch(`${h.base}/api/dead-letters/job-1`, { method: 'DELETE' });
    expect(discard.status).toBe(200);
    expect(await discard.json()).toEqual({
      discarded: [
        { mailbox: 'worker', messageId: 'job-1' },
        { mailbox: 'checker', messageId: 'job-1' },
      ],
    });
    const listed = (await getJson(`${h.base}/api/dead-letters`)).body.deadLetters as { envelope: object }[];
    expect(listed.map((d) => d.envelope)).toEqual([expect.objectContaining({ id: 'job-2' })]);
    expect((await h.bus.readEvents()).filter((e) => e.type === 'message.discarded')).toHaveLength(2);
    for (const id of ['job-1', 'live', 'never-sent']) {
      const again = await getJson(`${h.base}/api/dead-letters/${id}`, { method: 'DELETE' });
      expect(again).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
    }
    const bad = await getJson(`${h.base}/api/dead-letters/bad%01id`, { method: 'DELETE' });
    expect(bad).toEqual({ status: 400, body: expect.objectContaining({ code: 'GATEWAY_FRAME_INVALID' }) });
    expect((await h.bus.count('worker')).ready).toBe(1);
  });

  it('checks Origin, Host and the token on DELETE /api/dead-letters/{id} as on retry', async () => {
    const token = 'a-very-secret-token-123';
    const h = await hub({ token });
    await deadLetters(h, 'job-1', ['worker']);
    const url = `${h.base}/api/dead-letters/job-1`;
    const auth = { authorization: `Bearer ${token}` };
    const noToken = await getJson(url, { method: 'DELETE' });
    expect(noToken).toEqual({ status: 401, body: expect.objectContaining({ code: 'GATEWAY_UNAUTHORIZED' }) });
    const foreign = await getJson(url, {
      method: 'DELETE',
      headers: { ...auth, origin: 'http://evil.example' },
    });
    expect(foreign).toEqual({ status: 403, body: expect.objectContaining({ code: 'GATEWAY_FORBIDDEN' }) });
    const crossSite = await fetch(url, {
      method: 'DELETE',
      headers: { ...auth, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    expect(await rawGet(h.base, '/api/dead-letters/job-1', 'rebind.example:80', 'DELETE')).toBe(403);
    expect((await h.bus.listDeadLetters()).map((d) => d.envelope.id)).toEqual(['job-1']);
    const own = await fetch(url, { method: 'DELETE', headers: { ...auth, origin: h.base } });
    expect(own.status).toBe(200);
    expect(await h.bus.listDeadLetters()).toEqual([]);
  });
});
