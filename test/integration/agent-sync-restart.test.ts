import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ask, startServer, tempDir } from '../fixtures/agent-sync-harness.js';
import { startServeProcess } from '../fixtures/agent-sync-serve.js';
import { runCli } from '../fixtures/run-cli.js';

type Reply = Record<string, unknown>;

async function playHalfARound(port: number): Promise<void> {
  for (const request of [
    { cmd: 'join', agent: 'agent-a' },
    { cmd: 'join', agent: 'agent-b' },
    { cmd: 'send', agent: 'agent-a', to: 'agent-b', text: 'queued before restart' },
    { cmd: 'say', to: 'x y', text: 'private mailbox' },
    { cmd: 'impl-done', agent: 'agent-a' },
    { cmd: 'test-result', agent: 'agent-b', passed: true, output: 'ok' },
    { cmd: 'discuss', agent: 'agent-a', text: 'keep this' },
    { cmd: 'discuss-done', agent: 'agent-a', next_implementer: 'agent-b' },
  ]) {
    expect((await ask(port, request)).ok).toBe(true);
  }
}

async function snapshot(port: number): Promise<Reply> {
  const data = (await ask(port, { cmd: 'status' }))['data'] as Reply;
  return {
    phase: data['phase'],
    round: data['round'],
    implementer: data['implementer'],
    agents: Object.keys(data['agents'] as Reply),
    discussDone: data['discuss_done'],
    testResult: data['test_result'],
    pendingB: (await ask(port, { cmd: 'peek', agent: 'agent-b' }))['pending'],
    pendingXY: (await ask(port, { cmd: 'peek', agent: 'x y' }))['pending'],
    discussion: (await ask(port, { cmd: 'get-discussion' }))['discussion'],
  };
}

describe('agent-sync restart and fresh start', () => {
  let dir: string;
  beforeEach(async () => (dir = await tempDir()));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps phase, round, implementer, agents, mailboxes and discussion across a restart (SQLite)', async () => {
    const first = await startServer({ store: 'sqlite', cwd: dir });
    await playHalfARound(first.port);
    const before = await snapshot(first.port);
    expect(before).toMatchObject({ phase: 'DISCUSS', round: 1, pendingB: 4, pendingXY: 1 });
    await first.close();
    const second = await startServer({ store: 'sqlite', cwd: dir });
    expect(await snapshot(second.port)).toEqual(before);
    const mail = await ask(second.port, { cmd: 'listen', agent: 'agent-b', timeout: 0 });
    expect((mail['messages'] as Reply[])[0]?.['text']).toBe('queued before restart');
    expect((await ask(second.port, { cmd: 'discuss-done', agent: 'agent-b' }))['round']).toBe(2);
    await second.close();
  });

  it('starts clean with --fresh, and after a session that ended in SHUTDOWN', async () => {
    const first = await startServer({ store: 'sqlite', cwd: dir });
    await playHalfARound(first.port);
    await first.close();
    const fresh = await startServer({ store: 'sqlite', cwd: dir, isFresh: true });
    expect(await snapshot(fresh.port)).toEqual({
      phase: 'IMPLEMENT',
      round: 1,
      implementer: '',
      agents: [],
      discussDone: [],
      testResult: null,
      pendingB: 0,
      pendingXY: 0,
      discussion: [],
    });
    await ask(fresh.port, { cmd: 'join', agent: 'agent-a' });
    await ask(fresh.port, { cmd: 'send', to: 'agent-a', text: 'x' });
    await ask(fresh.port, { cmd: 'shutdown', reason: 'completed' });
    await fresh.close();
    const next = await startServer({ store: 'sqlite', cwd: dir });
    expect(await snapshot(next.port)).toMatchObject({
      phase: 'IMPLEMENT',
      round: 1,
      agents: [],
      pendingB: 0,
    });
    expect((await ask(next.port, { cmd: 'peek', agent: 'agent-a' }))['pending']).toBe(0);
    await next.close();
  });

  it('serves from `musubi agent-sync serve` and resumes after SIGTERM and a new process', async () => {
    const env = { AGENTS_LIST: ' agent-a, agent-b ,agent-c' };
    const first = await startServeProcess({ cwd: dir, env });
    await playHalfARound(first.port);
    expect((await ask(first.port, { cmd: 'join', agent: 'agent-c' })).ok).toBe(true);
    const before = await snapshot(first.port);
    expect(await first.stop()).toBe(0);
    const second = await startServeProcess({ cwd: dir, env });
    expect(await snapshot(second.port)).toEqual(before);
    expect(await second.stop()).toBe(0);
    const fresh = await startServeProcess({ cwd: dir, env, args: ['--fresh'] });
    expect(await snapshot(fresh.port)).toMatchObject({ phase: 'IMPLEMENT', round: 1, agents: [] });
    expect(await fresh.stop()).toBe(0);
  });
});

describe('agent-sync serve - a taken port', () => {
  it('prints one clean GATEWAY_ADDRESS_IN_USE line and exits 1, no log entry or stack trace', async () => {
    const taken = await startServer();
    const dir = await tempDir();
    try {
      const run = await runCli(['--store', 'memory:', 'agent-sync', 'serve', '--port', String(taken.port)], {
        cwd: dir,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `musubi: GATEWAY_ADDRESS_IN_USE: agent-sync cannot listen on 127.0.0.1:${taken.port}: listen EADDRINUSE: address already in use 127.0.0.1:${taken.port}\n`,
      );
    } finally {
      await taken.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
