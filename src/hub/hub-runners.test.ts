import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.schema.js';
import type { AgentRunEvent } from '../agents/agent-runner.js';
import { isMusubiError } from '../core/errors.js';
import { createHubRunners } from './hub-runners.js';

const config = configSchema.parse({
  agents: {
    'yadon-1': {
      backend: 'claude',
      permissionMode: 'plan',
      maxTurns: 7,
      systemPrompt: 'You implement.',
      env: { FROM: 'agent' },
      passEnv: ['CORP_*'],
      cwd: '/srv/work',
    },
    ignitian: { backend: 'gemini', permissionMode: 'yolo' },
    reviewer: { model: 'o4' },
  },
  backends: { claude: { env: { FROM: 'backend', PROXY: 'p' } }, gemini: { passEnv: ['GEMINI_*'] } },
  agentConcurrency: { claude: 2 },
  teams: {
    alpha: {
      pattern: 'three-phase',
      agents: ['yadoran', 'yadon-1'],
      budget: { maxCostUsd: 5, maxRunCostUsd: 1 },
    },
  },
});

const none = new Set<never>();

describe('hub runners - the one runner factory', () => {
  it('takes selection, environment, CLI settings, the backend limit and the team budget from config', () => {
    const runners = createHubRunners({ config, env: {}, installed: none });
    expect(runners.planOf('yadon-1', { tier: 'worker', workerNumber: 1 })).toEqual({
      agent: 'yadon-1',
      backend: 'claude',
      model: 'haiku',
      source: 'config agents.yadon-1',
      systemPrompt: 'You implement.',
      settings: { permissionMode: 'plan', maxTurns: 7 },
      passEnv: ['CORP_*'],
      extraEnv: { FROM: 'agent', PROXY: 'p' },
      cwd: '/srv/work',
      concurrency: 2,
      budget: { team: 'alpha', limits: { maxCostUsd: 5, maxRunCostUsd: 1 } },
    });
    // No entry of its own: the role's entry decides backend and settings, as for selection.
    expect(runners.planOf('ignitian_2', { role: 'ignitian' })).toMatchObject({
      backend: 'gemini',
      settings: { permissionMode: 'yolo' },
      passEnv: ['GEMINI_*'],
      concurrency: 4,
    });
    expect(runners.planOf('ignitian_2', { role: 'ignitian' }).budget).toBeUndefined();
  });

  it('lets the environment choose before the file, and an agent named after a backend run on it', () => {
    const runners = createHubRunners({ config, env: { YADON_1_BACKEND: 'codex' }, installed: none });
    expect(runners.planOf('yadon-1', { tier: 'worker', workerNumber: 1 })).toMatchObject({
      backend: 'codex',
      source: 'env YADON_1_BACKEND',
      // The agent's settings and environment follow it onto the other backend.
      settings: { permissionMode: 'plan', maxTurns: 7 },
      extraEnv: { FROM: 'agent' },
    });
    expect(runners.planOf('claude', { tier: 'manager' })).toMatchObject({
      backend: 'claude',
      model: 'sonnet',
    });
    // A model alone chooses no backend, and is the backend's model only once the entry names one.
    expect(runners.planOf('reviewer')).toMatchObject({ backend: 'scripted' });
    expect(runners.planOf('reviewer')).not.toHaveProperty('model');
  });

  it('runs every agent on a flag’s backend: the tier’s model for agents with a tier, else the CLI’s own', () => {
    const runners = createHubRunners({ config, env: {}, installed: none, flags: { backend: 'claude' } });
    expect(runners.planOf('yadoran', { tier: 'manager' })).toMatchObject({ model: 'sonnet', source: 'flag' });
    expect(runners.planOf(undefined)).not.toHaveProperty('model');
    expect(runners.planOf('reviewer')).toMatchObject({ backend: 'claude', model: 'o4' });
    const withModel = createHubRunners({
      config,
      env: {},
      installed: none,
      flags: { backend: 'claude-opus', model: 'x' },
    });
    expect(withModel.planOf(undefined)).toMatchObject({ backend: 'claude', model: 'x' });
  });

  it('refuses an unknown backend flag at once with AGENT_BACKEND_UNKNOWN', () => {
    let err: unknown;
    try {
      createHubRunners({ config, env: {}, installed: none, flags: { backend: 'gpt9' } });
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'AGENT_BACKEND_UNKNOWN')).toBe(true);
  });

  it('needs the bus for an agent with a team budget, since the budget is counted in the store', () => {
    const runners = createHubRunners({ config, env: {}, installed: none });
    let err: unknown;
    try {
      runners.runnerFor('yadon-1');
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'INTERNAL')).toBe(true);
  });

  it('holds the backend limit across every runner of one factory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-runners-'));
    try {
      const limited = configSchema.parse({ agentConcurrency: { scripted: 1 } });
      const runners = createHubRunners({ config: limited, env: {}, installed: none });
      const turn = (agent: string) =>
        runners.runnerFor(agent).run({ prompt: 'sleep 300\nreply done', cwd: dir, timeoutMs: 10_000 });
      const startedAt = performance.now();
      const results = await Promise.all([turn('a'), turn('b')]);
      expect(results.map((r) => r.text)).toEqual(['done', 'done']);
      // One slot: the second turn waited for the first instead of running beside it.
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(590);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('masks a secret an agent prints in its events and result when it was passed to the agent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-runners-'));
    try {
      const key = 'sk-ant-FAKE1234567890abcdef';
      const passing = configSchema.parse({ backends: { scripted: { passEnv: ['CORP_LLM_KEY'] } } });
      const env = { PATH: process.env['PATH'], CORP_LLM_KEY: key };
      const runners = createHubRunners({ config: passing, env, installed: none });
      const events: AgentRunEvent[] = [];
      const result = await runners.runnerFor('alice').run({
        prompt: 'run node -e "console.log(\'401 invalid x-api-key \' + process.env.CORP_LLM_KEY)"',
        cwd: dir,
        timeoutMs: 10_000,
        onEvent: (e) => events.push(e),
      });
      expect(result.text).toBe('401 invalid x-api-key sk-ant-…[masked]');
      expect(JSON.stringify([events, result])).not.toContain(key);
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'line', line: '401 invalid x-api-key sk-ant-…[masked]' }),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('masks a secret of this start that is in neither config nor env (the dashboard token)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-runners-'));
    try {
      const token = 'HubToken0123456789abcdefghijklmnopqrstuvwx';
      const runners = createHubRunners({
        config: configSchema.parse({}),
        env: { PATH: process.env['PATH'] },
        installed: none,
        extraSecrets: [token],
      });
      const result = await runners.runnerFor('alice').run({
        prompt: `reply the token is ${token}`,
        cwd: dir,
        timeoutMs: 10_000,
      });
      expect(result.text).toBe('the token is …[masked]');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
