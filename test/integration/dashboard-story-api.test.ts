import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.types.js';
import { createSystemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/core/config.schema.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import {
  agentsReply,
  inboxReply,
  messageDetailReply,
  messagesReply,
  runReply,
  runsReply,
  turnReply,
  turnsReply,
} from '../../src/gateways/http/api-schemas.js';
import { createHubRunners } from '../../src/hub/hub-runners.js';
import { createRunSource } from '../../src/hub/run-source.js';
import { RunOwners } from '../../src/runs/run-owner.js';
import { startHttpHub } from '../fixtures/http-hub.js';
import { openSse } from '../fixtures/sse-client.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  expect(res.status, `${url}: ${await res.clone().text()}`).toBe(200);
  return res.json();
}

async function postJson(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const clock = createSystemClock();
const logger = createSilentLogger();
const env = {
  ...process.env,
  LLM_BACKEND: '',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

function scriptedRunners(bus: Bus) {
  return createHubRunners({
    config: configSchema.parse({}),
    env,
    installed: new Set(),
    bus,
    recordTurns: { clock, ids: createIdGenerator(clock), logger },
    flags: { backend: 'scripted' },
  });
}

describe('message detail and history', () => {
  it('keeps a message readable after ack, with every step of a retry and dead-letter episode', async () => {
    await using hub = await startHttpHub({ maxAttempts: 5 });
    const body = JSON.stringify({ type: 'review', text: 'x'.repeat(5000) });
    const sent = await hub.bus.send({
      from: 'alice',
      to: 'bob',
      type: 'review',
      body,
      thread: 'pr-7',
      headers: { source: 'test' },
    });
    const id = sent.envelope.id;
    const first = await hub.bus.receive('bob');
    expect(first).not.toBeNull();
    await hub.bus.nack(first!.deliveryId, { delayMs: 0 });
    const second = await hub.bus.receive('bob');
    await hub.bus.deadLetter(second!.deliveryId, 'handler gave up');
    await hub.bus.retryDeadLetter(id);
    const third = await hub.bus.receive('bob');
    await hub.bus.ack(third!.deliveryId);

    const detail = messageDetailReply.parse(await getJson(`${hub.base}/api/messages/${id}`));
    expect(detail.isStored).toBe(false);
    expect(detail.envelope).toMatchObject({
      id,
      from: 'alice',
      to: 'bob',
      thread: 'pr-7',
      headers: { source: 'test' },
      isBodyCut: true,
    });
    expect(detail.envelope?.body).toBe(body.slice(0, 4096));
    expect(detail.history.map((s) => s.kind)).toEqual([
      'sent',
      'claimed',
      'nacked',
      'claimed',
      'dead_lettered',
      'escalated',
      'requeued',
      'claimed',
      'acked',
    ]);
    expect(detail.history[1]).toMatchObject({ holder: 'bob', attempt: 1 });
    expect(detail.history[4]).toMatchObject({ reason: 'handler gave up' });

    const rows = messagesReply.parse(await getJson(`${hub.base}/api/messages`));
    expect(rows.messages).toEqual([
      expect.objectContaining({ messageId: id, status: 'acked', retries: 2, wasDead: true, thread: 'pr-7' }),
    ]);
    expect(rows.messages[0]?.bodyPreview).toBe(body.slice(0, 280));
  });

  it('shows a stored envelope whole, marks an expired lease and refuses bad ids', async () => {
    await using hub = await startHttpHub({ maxAttempts: 3 });
    const { envelope } = await hub.bus.send({ from: 'a', to: 'b', type: 't', body: 'hello' });
    await hub.bus.receive('b', { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const detail = messageDetailReply.parse(await getJson(`${hub.base}/api/messages/${envelope.id}`));
    expect(detail.isStored).toBe(true);
    expect(detail.envelope).toMatchObject({ body: 'hello', isBodyCut: false });
    expect(detail.history.map((s) => s.kind)).toEqual(['sent', 'claimed', 'lease_expired']);

    const unknown = await fetch(`${hub.base}/api/messages/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
    const bad = await fetch(`${hub.base}/api/messages/${encodeURIComponent('a b')}`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'GATEWAY_FRAME_INVALID' });
  });

  it('streams message.sent with a preview, never the body', async () => {
    await using hub = await startHttpHub();
    const stream = await openSse(`${hub.base}/api/events`);
    try {
      await stream.next(); // ready
      await hub.bus.send({ from: 'a', to: 'b', type: 't', body: 'secret body '.repeat(100), thread: 'th' });
      const event = await stream.next();
      const data = JSON.parse(event.data) as Record<string, unknown>;
      expect(data).toMatchObject({ type: 'message.sent', thread: 'th' });
      expect(data['body']).toBeUndefined();
      expect(String(data['bodyPreview'])).toHaveLength(280);
    } finally {
      stream.close();
    }
  });
});

describe('the human inbox', () => {
  it('lists results, replies and escalations to the human with a kind and a title', async () => {
    await using hub = await startHttpHub({ maxAttempts: 1 });
    await hub.bus.send({
      from: 'yadoran',
      to: 'human',
      type: 'result',
      body: JSON.stringify({ type: 'result', summary: 'All three phases done', output: '…' }),
    });
    await hub.bus.send({ from: 'alice', to: 'human', type: 'say', body: 'Done.\nDetails follow.' });
    await hub.bus.send({ from: 'alice', to: 'bob', type: 'review', body: 'not for the human' });
    const { envelope } = await hub.bus.send({ from: 'alice', to: 'carol', type: 'job', body: 'x' });
    const d = await hub.bus.receive('carol');
    await hub.bus.nack(d!.deliveryId, { delayMs: 0 }); // attempts used up: dead-lettered, escalated

    const inbox = inboxReply.parse(await getJson(`${hub.base}/api/inbox`));
    expect(inbox.items.map((i) => [i.kind, i.from, i.title])).toEqual([
      ['result', 'yadoran', 'All three phases done'],
      ['reply', 'alice', 'Done.'],
      ['escalation', 'alice', expect.stringContaining('job from alice to carol gave up after 1 attempts')],
    ]);
    expect(inbox.items[2]?.messageId).toBe(envelope.id);
  });
});

describe('turns and transcripts', () => {
  it('records a turn with its tool calls, serves it and derives the agent state', async () => {
    let runners: ReturnType<typeof scriptedRunners> | undefined;
    await using hub = await startHttpHub({
      withBus: (bus) => {
        runners = scriptedRunners(bus);
        return { turns: runners.turns! };
      },
    });
    const cwd = await tempDir('musubi-turn-');
    await hub.agents.update('alice', { protocol: 'agent-sync', state: 'idle' });
    const result = await runners!.runnerFor('alice').run({
      prompt: 'write notes.txt hello\nrun node -e "console.log(42)"\nreply all done',
      cwd,
      timeoutMs: 10_000,
      label: { team: 'peers', phase: 'IMPLEMENT' },
    });
    expect(result.isError).toBe(false);

    const list = turnsReply.parse(await getJson(`${hub.base}/api/agents/alice/turns`));
    expect(list.turns).toHaveLength(1);
    const summary = list.turns[0]!;
    expect(summary).toMatchObject({
      agent: 'alice',
      backend: 'scripted',
      team: 'peers',
      phase: 'IMPLEMENT',
      state: 'succeeded',
    });
    expect(summary.outcome).toContain('all done');
    expect(summary.toolCalls).toBeGreaterThanOrEqual(2);
    const detail = turnReply.parse(await getJson(`${hub.base}/api/turns/${summary.id}`));
    const kinds = detail.entries.map((e) => e.kind);
    expect(kinds).toContain('tool');
    expect(kinds).toContain('tool_result');
    expect(kinds.at(-1)).toBe('finished');
    const tools = detail.entries.flatMap((e) => (e.kind === 'tool' ? [[e.toolKind, e.summary]] : []));
    expect(tools).toEqual(
      expect.arrayContaining([
        ['edit', expect.stringContaining('notes.txt')],
        ['command', expect.stringContaining('node')],
      ]),
    );
    expect(detail.entries.map((e) => e.n)).toEqual(detail.entries.map((_, i) => i));

    const all = turnsReply.parse(await getJson(`${hub.base}/api/turns?agent=alice&limit=5`));
    expect(all.turns.map((t) => t.id)).toEqual([summary.id]);
    const agents = agentsReply.parse(await getJson(`${hub.base}/api/agents`));
    const card = agents.agents.find((a) => a.name === 'alice');
    expect(card?.activity).toMatchObject({ state: 'idle' });
    // No team budget counts alice: her spend is her recorded turns'.
    expect(card?.spend).toEqual({ ...summary.usage, runs: 1 });

    const missing = await fetch(`${hub.base}/api/turns/nope`);
    expect(missing.status).toBe(404);
  });
});

/** A git repository with one commit, and its `git`. */
async function pageRepo(prefix: string): Promise<{ repo: string; git: (...args: string[]) => string }> {
  const repo = await tempDir(prefix);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
  git('init', '-q');
  await writeFile(join(repo, 'README.md'), 'hello\n');
  git('add', '-A');
  git('commit', '-qm', 'initial');
  return { repo, git };
}

/** A hub whose page runs `musubi run` in `repo` on the scripted agent, its turns in the turn log. */
function pageRunHub(repo: string, options: { readonly maxConcurrentRuns?: number } = {}) {
  return startHttpHub({
    withBus: (bus) => {
      const runners = scriptedRunners(bus);
      return {
        turns: runners.turns!,
        runs: createRunSource({
          bus,
          cwd: repo,
          config: configSchema.parse({}),
          env,
          installed: new Set(),
          logger,
          clock,
          ...options,
        }),
      };
    },
  });
}

describe('runs from the page', () => {
  it('starts a run in the hub repository, lists it and shows its subtasks', async () => {
    const { repo, git } = await pageRepo('musubi-page-run-');
    await using hub = await pageRunHub(repo);
    const empty = runsReply.parse(await getJson(`${hub.base}/api/runs`));
    expect(empty).toEqual({ canStart: true, runs: [] });

    const refused = await postJson(`${hub.base}/api/runs`, { goal: '  ' });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'GATEWAY_FRAME_INVALID' });

    const started = await postJson(`${hub.base}/api/runs`, {
      goal: '- write a.txt A\n- write b.txt B',
      agent: 'scripted',
      workers: 2,
    });
    expect(started.status).toBe(202);
    const { run } = runReply.parse(started.json);
    let current = run;
    for (let i = 0; i < 200 && (current.status === 'running' || current.isActive); i++) {
      await new Promise((r) => setTimeout(r, 100));
      current = runReply.parse(await getJson(`${hub.base}/api/runs/${run.id}`)).run;
    }
    expect(current).toMatchObject({ status: 'succeeded', branch: `musubi/${run.id}`, isActive: false });
    expect(current.subtasks.length).toBeGreaterThanOrEqual(2);
    expect(current.subtasks.every((s) => s.status === 'succeeded')).toBe(true);
    const listed = runsReply.parse(await getJson(`${hub.base}/api/runs`));
    expect(listed.runs.map((r) => r.id)).toEqual([run.id]);
    const runTurns = turnsReply.parse(await getJson(`${hub.base}/api/turns?run=${run.id}`));
    expect(runTurns.turns.map((t) => t.agent)).toEqual(
      expect.arrayContaining([`manager.${run.id}`, `worker-1.${run.id}`]),
    );
    expect(git('branch', '--list', `musubi/${run.id}`)).toContain(run.id);

    const unknown = await fetch(`${hub.base}/api/runs/nope/stop`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('lists a run’s members in the agent directory while it runs, busy with their task, and not after', async () => {
    const { repo } = await pageRepo('musubi-page-members-');
    await using hub = await pageRunHub(repo);
    const started = await postJson(`${hub.base}/api/runs`, {
      goal: '- sleep 1500\n- write a.txt A',
      agent: 'scripted',
      workers: 2,
    });
    const { run } = runReply.parse(started.json);
    type Listed = {
      agents: { name: string; state: string; role?: string; run?: string; backend?: string }[];
    };
    const agents = async (): Promise<Listed['agents']> =>
      ((await getJson(`${hub.base}/api/agents`)) as Listed).agents;
    await expect
      .poll(async () => (await agents()).find((a) => a.name === `worker-1.${run.id}`)?.state, {
        timeout: 10_000,
      })
      .toBe('busy');
    const members = await agents();
    expect(members.map((a) => a.name).sort()).toEqual(
      [`manager.${run.id}`, `resolver.${run.id}`, `worker-1.${run.id}`, `worker-2.${run.id}`].sort(),
    );
    expect(members.find((a) => a.name === `worker-1.${run.id}`)).toMatchObject({
      role: 'worker',
      run: run.id,
      backend: 'scripted',
      currentTask: 'implement-sub1',
    });
    let current = run;
    for (let i = 0; i < 200 && (current.status === 'running' || current.isActive); i++) {
      await new Promise((r) => setTimeout(r, 100));
      current = runReply.parse(await getJson(`${hub.base}/api/runs/${run.id}`)).run;
    }
    expect(current.status).toBe('succeeded');
    // The run ended: its members left the directory; their turns stay in the turn log.
    expect(await agents()).toEqual([]);
    const turns = turnsReply.parse(await getJson(`${hub.base}/api/agents/worker-1.${run.id}/turns`));
    expect(turns.turns.length).toBeGreaterThan(0);
  });

  it('refuses a run beyond gateways.http.maxConcurrentRuns with 429 RUN_LIMIT_REACHED', async () => {
    const { repo } = await pageRepo('musubi-page-cap-');
    await using hub = await pageRunHub(repo, { maxConcurrentRuns: 1 });
    // Two starts racing in: one takes the only place, the other is refused before it does anything.
    const [first, second] = await Promise.all([
      postJson(`${hub.base}/api/runs`, { goal: 'sleep 20000', agent: 'scripted' }),
      postJson(`${hub.base}/api/runs`, { goal: 'sleep 20000', agent: 'scripted' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([202, 429]);
    const refused = first.status === 429 ? first : second;
    expect(refused.json).toMatchObject({ code: 'RUN_LIMIT_REACHED' });
    const { run } = runReply.parse((first.status === 202 ? first : second).json);
    expect(runsReply.parse(await getJson(`${hub.base}/api/runs`)).runs).toHaveLength(1);
    const stopped = await postJson(`${hub.base}/api/runs/${run.id}/stop`, {});
    expect(stopped.status).toBe(200);
    // Its place is free again once it stopped.
    const third = await postJson(`${hub.base}/api/runs`, { goal: 'sleep 20000', agent: 'scripted' });
    expect(third.status).toBe(202);
    const { run: again } = runReply.parse(third.json);
    expect((await postJson(`${hub.base}/api/runs/${again.id}/stop`, {})).status).toBe(200);
  });

  it('refuses the page’s Resume of a run another live process owns with 409 RUN_ACTIVE', async () => {
    const { repo } = await pageRepo('musubi-page-owned-');
    await using hub = await pageRunHub(repo);
    const started = await postJson(`${hub.base}/api/runs`, { goal: 'sleep 20000', agent: 'scripted' });
    const { run } = runReply.parse(started.json);
    expect((await postJson(`${hub.base}/api/runs/${run.id}/stop`, {})).status).toBe(200);
    // A `musubi run --resume` in a terminal (another process: this test's, on this host) owns it now.
    const terminal = new RunOwners({ kv: hub.bus.kv, clock, self: { host: 'elsewhere', pid: process.pid } });
    const claim = await terminal.claim(run.id);
    try {
      const resumed = await postJson(`${hub.base}/api/runs/${run.id}/resume`, {});
      expect(resumed.status).toBe(409);
      expect(resumed.json).toMatchObject({ code: 'RUN_ACTIVE' });
    } finally {
      await claim.release();
    }
    // Released: the page may resume it.
    const resumed = await postJson(`${hub.base}/api/runs/${run.id}/resume`, {});
    expect(resumed.status).toBe(202);
    expect((await postJson(`${hub.base}/api/runs/${run.id}/stop`, {})).status).toBe(200);
  });

  it('says why runs cannot start outside a repository', async () => {
    const dir = await tempDir('musubi-no-repo-');
    await using hub = await startHttpHub({
      withBus: (bus) => ({
        runs: createRunSource({
          bus,
          cwd: dir,
          config: configSchema.parse({}),
          env,
          installed: new Set(),
          logger,
          clock,
        }),
      }),
    });
    const reply = runsReply.parse(await getJson(`${hub.base}/api/runs`));
    expect(reply.canStart).toBe(false);
    expect(reply.reason).toContain('not in a git repository');
    const refused = await postJson(`${hub.base}/api/runs`, { goal: 'x' });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'RUN_NOT_A_REPOSITORY' });
  });
});
