// HTTP gateway REST reads (health, agents, mailboxes, leases, messages, tasks, teams) and say.
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, httpHubSession, postJson } from '../fixtures/http-hub-session.js';

const { start: hub, close } = httpHubSession();
afterEach(close);

describe('http gateway - REST', () => {
  it('answers health with the newest event cursor', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'b', type: 't' });
    const { status, body } = await getJson(`${h.base}/api/health`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'ok', service: 'musubi' });
    expect(body.cursor).toBe((await h.bus.readEvents()).at(-1)?.cursor);
  });

  it('lists agents from the directory with their spend, and an empty list when there are none', async () => {
    const h = await hub();
    expect((await getJson(`${h.base}/api/agents`)).body).toEqual({
      agents: [],
      totals: { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 },
    });
    await h.agents.update('alice', {
      protocol: 'yadon',
      state: 'busy',
      bubble: 'テストを書いています',
      team: 't1',
    });
    await h.bus.kv.kvSet('budget/t1/alice', { inputTokens: 10, outputTokens: 5, costUsd: 0.5, runs: 1 });
    await h.bus.kv.kvSet('budget/t2/alice', { inputTokens: 1, outputTokens: 1, costUsd: 0.25, runs: 1 });
    await h.bus.kv.kvSet('budget/t2/ghost', { inputTokens: 100, outputTokens: 0, costUsd: 1, runs: 2 });
    await h.bus.kv.kvSet('budget/t2/broken', { nonsense: true });
    const { body } = await getJson(`${h.base}/api/agents`);
    expect(body.agents).toEqual([
      expect.objectContaining({
        name: 'alice',
        protocol: 'yadon',
        state: 'busy',
        bubble: 'テストを書いています',
        spend: { inputTokens: 11, outputTokens: 6, costUsd: 0.75, runs: 2 },
      }),
    ]);
    expect(body.totals).toEqual({ inputTokens: 111, outputTokens: 6, costUsd: 1.75, runs: 4 });
  });

  it('shows mailbox depths, peeks without claiming, and lists leases', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'bob', type: 'first', body: 'x'.repeat(5000) });
    await h.bus.send({ from: 'a', to: 'bob', type: 'second' });
    const claimed = await h.bus.receive('bob', { timeoutMs: 0 });
    const boxes = (await getJson(`${h.base}/api/mailboxes`)).body.mailboxes;
    expect(boxes).toEqual([expect.objectContaining({ mailbox: 'bob', ready: 1, leased: 1, total: 2 })]);
    const peek = (await getJson(`${h.base}/api/mailboxes/bob/messages?limit=10`)).body;
    expect(peek.messages).toHaveLength(2);
    expect(peek.messages).toContainEqual(
      expect.objectContaining({
        state: 'leased',
        envelope: expect.objectContaining({ type: 'first', isBodyCut: true }),
      }),
    );
    const leases = (await getJson(`${h.base}/api/leases`)).body.leases;
    expect(leases).toEqual([
      expect.objectContaining({
        mailbox: 'bob',
        messageId: claimed?.envelope.id,
        attempt: 1,
        leaseUntil: claimed?.leaseUntil,
      }),
    ]);
    expect((await getJson(`${h.base}/api/mailboxes/bad%20name/messages`)).status).toBe(400);
    expect((await getJson(`${h.base}/api/mailboxes/bob/messages?limit=0`)).body.code).toBe(
      'GATEWAY_FRAME_INVALID',
    );
  });

  it('lists recent messages with status, filtered by agent, type and thread', async () => {
    const h = await hub();
    await h.bus.send({
      from: 'alice',
      to: 'bob',
      type: 'review',
      thread: 'th-1',
      body: 'レビューお願いします',
    });
    await h.bus.send({ from: 'bob', to: 'carol', type: 'note' });
    await h.bus.send({ from: 'carol', to: 'alice', type: 'review', thread: 'th-2' });
    const d = await h.bus.receive('carol', { timeoutMs: 0 });
    if (d !== null) await h.bus.ack(d.deliveryId);
    const all = (await getJson(`${h.base}/api/messages`)).body;
    expect((all.messages as unknown[]).map((m) => (m as { type: string }).type)).toEqual([
      'review',
      'note',
      'review',
    ]);
    expect(all.messages).toContainEqual(
      expect.objectContaining({ from: 'bob', mailbox: 'carol', status: 'acked', attempt: 1 }),
    );
    expect(all.messages).toContainEqual(
      expect.objectContaining({ thread: 'th-1', bodyPreview: 'レビューお願いします' }),
    );
    const bob = (await getJson(`${h.base}/api/messages?agent=bob`)).body.messages as { type: string }[];
    expect(bob.map((m) => m.type)).toEqual(['review', 'note']);
    const reviews = (await getJson(`${h.base}/api/messages?type=review&thread=th-2`)).body.messages;
    expect(reviews).toEqual([expect.objectContaining({ from: 'carol', mailbox: 'alice' })]);
    const after = (await getJson(`${h.base}/api/messages?after=${all.cursor as number}`)).body;
    expect(after).toEqual({ cursor: all.cursor, messages: [] });
  });

  it('lists tasks and cancels one; an unknown task is 404', async () => {
    const h = await hub();
    await h.tasks.put({ id: 't-1', state: 'running', title: '翻訳', progress: 0.4 });
    await h.tasks.put({ id: 't-2', state: 'queued' });
    const listed = (await getJson(`${h.base}/api/tasks`)).body;
    expect(listed).toEqual({
      isAvailable: true,
      tasks: [expect.objectContaining({ id: 't-1', progress: 0.4 }), { id: 't-2', state: 'queued' }],
    });
    const cancel = await getJson(`${h.base}/api/tasks/t-1/cancel`, { method: 'POST' });
    expect(cancel).toEqual({
      status: 200,
      body: { task: expect.objectContaining({ id: 't-1', state: 'cancelled' }) },
    });
    expect((await getJson(`${h.base}/api/tasks/nope/cancel`, { method: 'POST' })).status).toBe(404);
  });

  it('shows reported teams and teams seen only in team events, with their timeline', async () => {
    const h = await hub({
      teams: [
        {
          list: async () => [
            { id: 'yadon-1', pattern: 'three-phase', phase: 'docs', phases: ['implement', 'docs', 'review'] },
          ],
        },
      ],
    });
    await h.bus.publish({
      type: 'team.phase_changed',
      data: { team: 'peers', from: 'IMPLEMENT', to: 'TEST', round: 1 },
    });
    await h.bus.publish({
      type: 'team.phase_changed',
      data: { team: 'peers', from: 'TEST', to: 'DISCUSS', round: 1 },
    });
    const teams = (await getJson(`${h.base}/api/teams`)).body.teams;
    expect(teams).toEqual([
      expect.objectContaining({
        id: 'peers',
        pattern: 'team',
        phase: 'DISCUSS',
        round: 1,
        history: [
          expect.objectContaining({ phase: 'TEST', round: 1 }),
          expect.objectContaining({ phase: 'DISCUSS', round: 1 }),
        ],
      }),
      expect.objectContaining({ id: 'yadon-1', pattern: 'three-phase', phase: 'docs', history: [] }),
    ]);
  });

  it('says a message to one agent or to all of them', async () => {
    const h = await hub();
    const none = await postJson(`${h.base}/api/say`, { to: '*', text: 'hello' });
    expect(none.status).toBe(404);
    await h.agents.update('alice', { protocol: 'agent-sync' });
    await h.agents.update('bob', { protocol: 'ignite' });
    const one = await postJson(`${h.base}/api/say`, { to: 'alice', text: 'こんにちは', thread: 'th' });
    expect(one.status).toBe(202);
    const all = await postJson(`${h.base}/api/say`, { to: '*', text: 'everyone' });
    expect(((await all.json()) as { sent: unknown[] }).sent).toHaveLength(2);
    const [first] = await h.bus.peek('alice');
    expect(first?.envelope).toMatchObject({
      from: 'human',
      type: 'say',
      body: 'こんにちは',
      thread: 'th',
      headers: { source: 'dashboard' },
    });
    expect((await h.bus.count('bob')).total).toBe(1);
  });

  it('takes an empty query parameter as absent, as an HTML form sends it', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'b', type: 't' });
    const messages = await getJson(`${h.base}/api/messages?agent=&type=&thread=&after=&limit=200`);
    expect(messages.status).toBe(200);
    expect(messages.body['messages']).toHaveLength(1);
    expect((await getJson(`${h.base}/api/dead-letters?mailbox=&limit=`)).status).toBe(200);
    expect((await getJson(`${h.base}/api/mailboxes/b/messages?limit=`)).status).toBe(200);
    expect((await getJson(`${h.base}/api/messages?limit=x`)).status).toBe(400);
  });
});
