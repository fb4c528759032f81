import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ask, startServer, type TestServer } from '../fixtures/agent-sync-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let musubi: BundledCli;
beforeAll(async () => (musubi = await bundleCli()));
afterAll(() => musubi.remove());

interface Mail {
  readonly from: unknown;
  readonly type: unknown;
  readonly text: unknown;
}

/**
 * One agent driven only through `musubi agent-sync` processes, as a Copilot/Claude session would:
 * wait (listen) for the phase it needs, act, repeat.
 */
class CliAgent {
  readonly inbox: Mail[] = [];
  #seen = 0;

  constructor(
    readonly name: string,
    readonly server: TestServer,
  ) {}

  async cli(...args: string[]): Promise<string> {
    const run = await musubi.run(['agent-sync', ...args, '--port', String(this.server.port)], {
      cwd: this.server.cwd,
      timeoutMs: 60_000,
    });
    if (run.code !== 0) throw new Error(`${this.name}: ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return run.stdout;
  }

  /** Listens until a message whose text contains `needle` arrives (mail is kept in `inbox`). */
  async waitFor(needle: string): Promise<void> {
    for (;;) {
      const found = this.inbox.slice(this.#seen).findIndex((m) => String(m.text).includes(needle));
      if (found >= 0) {
        this.#seen += found + 1;
        return;
      }
      const reply = JSON.parse(await this.cli('listen', this.name, '--timeout', '30')) as {
        messages: Mail[];
      };
      this.inbox.push(...reply.messages);
    }
  }
}

async function playRounds(server: TestServer, names: readonly string[], rounds: number): Promise<CliAgent[]> {
  const agents = names.map((name) => new CliAgent(name, server));
  // The first joiner implements round 1: join it first, the others together.
  await agents[0]?.cli('join', names[0] ?? '');
  await Promise.all(agents.slice(1).map((a) => a.cli('join', a.name)));
  const implementer = (round: number): string => names[(round - 1) % names.length] ?? '';
  const play = async (me: CliAgent): Promise<void> => {
    for (let round = 1; round <= rounds; round++) {
      const tester = implementer(round + 1);
      if (me.name === implementer(round)) {
        if (round > 1) await me.waitFor(`DISCUSS -> IMPLEMENT (round ${round})`);
        await me.cli('impl-done', me.name, '--summary', `feature ${round} by ${me.name}`);
      }
      if (me.name === tester) {
        await me.waitFor(`IMPLEMENT -> TEST (round ${round})`);
        await me.cli('test-result', me.name, '--passed', '--output', `${round * 10} passed`);
      }
      await me.waitFor(`TEST -> DISCUSS (round ${round})`);
      await me.cli('discuss', me.name, `round ${round}: ${me.name} suggests more tests`);
      await me.cli('discuss-done', me.name, '--next-impl', implementer(round + 1));
    }
    await me.waitFor(`DISCUSS -> IMPLEMENT (round ${rounds + 1})`);
  };
  await Promise.all(agents.map(play));
  return agents;
}

async function checkOutcome(server: TestServer, names: readonly string[], agents: CliAgent[]): Promise<void> {
  const status = (await ask(server.port, { cmd: 'status' }))['data'] as Record<string, unknown>;
  expect(status).toMatchObject({
    phase: 'IMPLEMENT',
    round: 4,
    implementer: names[3 % names.length],
    test_result: null,
  });
  expect(Object.keys(status['agents'] as object).sort()).toEqual([...names].sort());
  const discussion = (await ask(server.port, { cmd: 'get-discussion' }))['discussion'] as Array<
    Record<string, unknown>
  >;
  expect(discussion.map((e) => e['round'])).toEqual([1, 2, 3].flatMap((r) => names.map(() => r)));
  for (const agent of agents) {
    const phases = agent.inbox.filter((m) => m.type === 'phase_change').map((m) => m.text);
    expect(phases).toEqual(
      [1, 2, 3].flatMap((r) => [
        `Phase changed: IMPLEMENT -> TEST (round ${r})`,
        `Phase changed: TEST -> DISCUSS (round ${r})`,
        `Phase changed: DISCUSS -> IMPLEMENT (round ${r + 1})`,
      ]),
    );
    const discussFrom = agent.inbox.filter((m) => m.type === 'discuss').map((m) => m.from);
    expect(discussFrom.length).toBe(3 * (names.length - 1));
    expect(discussFrom).not.toContain(agent.name);
  }
  for (const round of [1, 2, 3]) {
    const log = await readFile(join(server.cwd, `logs/v6/round_${round}.md`), 'utf8');
    expect(log).toContain(`## IMPL_DONE / ${names[(round - 1) % names.length]} — `);
    expect(log).toContain(`passed=True\n\n${round * 10} passed\n`);
  }
}

describe('agent-sync scenarios driven by CLI processes', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('takes two agents through three full rounds', async () => {
    const names = ['agent-a', 'agent-b'];
    server = await startServer({ agents: names, store: 'sqlite' });
    await checkOutcome(server, names, await playRounds(server, names, 3));
  }, 90_000);

  it('takes three agents through three full rounds', async () => {
    const names = ['agent-a', 'agent-b', 'agent-c'];
    server = await startServer({ agents: names, store: 'sqlite' });
    await checkOutcome(server, names, await playRounds(server, names, 3));
  }, 90_000);
});
