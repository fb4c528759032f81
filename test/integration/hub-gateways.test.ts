import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/core/config.schema.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import type { Hub } from '../../src/hub/hub.js';
import { startConfiguredHub } from '../../src/hub/start-configured-hub.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { makeIgniteWorkspace } from '../fixtures/ignite-workspace.js';

let dir = '';
let hub: Hub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  await rm(dir, { recursive: true, force: true });
});

function agentSyncRequest(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.end(`${line}\n`));
    let reply = '';
    socket.setEncoding('utf8').on('data', (d: string) => (reply += d));
    socket.on('end', () => resolve(reply));
    socket.on('error', reject);
  });
}

describe('hub - gateways from config', () => {
  it('starts agent_sync, yadon, IGNITE and the dashboard on one bus when the config enables them', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mh-'));
    const config = configSchema.parse({
      store: `sqlite:${join(dir, 'bus.db')}`,
      log: { level: 'silent' },
      gateways: {
        agentSync: { enabled: true, port: 0 },
        yadon: { enabled: true, socketDir: join(dir, 's'), workers: 2, workDir: dir },
        ignite: { enabled: true, workspace: dir, workers: 1 },
        http: { enabled: true, port: 0 },
      },
    });
    const clock = createSystemClock();
    const ids = createIdGenerator(clock);
    const logger = createSilentLogger();
    const env = { PATH: '/nonexistent', AGENTS_LIST: 'agent-a,agent-b' };
    hub = await startConfiguredHub({ config, cwd: dir, env, logger, clock, ids, installed: new Set() });
    expect(hub.gateways.map((g) => g.name)).toEqual(['agent-sync', 'yadon', 'ignite', 'http']);

    const agentSync = hub.gateways[0]?.address();
    if (agentSync?.kind !== 'tcp') throw new Error('agent-sync should listen on TCP');
    const reply = await agentSyncRequest(agentSync.port, '{"cmd": "status"}');
    expect(JSON.parse(reply)).toMatchObject({ ok: true, data: { phase: 'IMPLEMENT', round: 1 } });

    const socketMode = (await stat(join(dir, 's', 'yadon-agent-yadoran.sock'))).mode & 0o777;
    expect(socketMode).toBe(0o600);
    await stat(join(dir, '.ignite', 'queue', 'leader')).catch(() => stat(join(dir, 'queue', 'leader')));

    const http = hub.gateways[3]?.address();
    if (http?.kind !== 'tcp') throw new Error('http should listen on TCP');
    const health = await fetch(`http://127.0.0.1:${http.port}/api/health`);
    expect(health.status).toBe(200);
  });
});

describe('hub - the IGNITE gateway reads the workspace settings', () => {
  // A worker's task whose turn sleeps 1.5 s. Its reply cannot be sent (no `musubi` on PATH), so the turn
  // fails either way; what max_turn decides is whether it is stopped as a timeout first.
  async function runLongTurn(options: {
    readonly systemYaml: string;
    readonly ignite?: Record<string, unknown>;
    readonly env?: Record<string, string>;
  }): Promise<string> {
    const ws = await makeIgniteWorkspace({ workers: 1 });
    dir = ws.workspace;
    await writeFile(join(ws.rt, 'system.yaml'), options.systemYaml);
    const config = configSchema.parse({
      store: `sqlite:${join(dir, 'bus.db')}`,
      log: { level: 'silent' },
      gateways: {
        http: { enabled: false },
        ignite: { enabled: true, workspace: dir, workers: 1, ...options.ignite },
      },
    });
    const clock = createSystemClock();
    const env = { PATH: '/nonexistent', ...options.env };
    hub = await startConfiguredHub({
      config,
      cwd: dir,
      env,
      logger: createSilentLogger(),
      clock,
      ids: createIdGenerator(clock),
      installed: new Set(),
    });
    await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'task_assignment',
      body: 'task_id: "t1"\ntitle: "long"\ndescription: "sleep 1500"\n',
    });
    const bus = hub.bus;
    let kind = '';
    await waitFor(
      async () => {
        const retry = (await bus.readEvents({ limit: 10_000 })).find(
          (e) => e.type === 'gateway.ignite.retrying',
        );
        kind = retry !== undefined && 'data' in retry ? String(retry.data['kind']) : '';
        return kind !== '';
      },
      10_000,
      'the first retry',
    );
    return kind;
  }

  it('stops a turn after system.yaml queue.max_turn', async () => {
    expect(await runLongTurn({ systemYaml: 'queue:\n  max_turn: 0.3\n' })).toBe('timeout');
  });

  it('lets musubi.yaml gateways.ignite win over system.yaml', async () => {
    const kind = await runLongTurn({
      systemYaml: 'queue:\n  max_turn: 0.3\n',
      ignite: { maxTurnMs: 60_000 },
    });
    expect(kind).toBe('failed');
  });

  it('lets the environment win over musubi.yaml', async () => {
    const kind = await runLongTurn({
      systemYaml: 'queue:\n  max_turn: 600\n',
      ignite: { maxTurnMs: 60_000 },
      env: { QUEUE_MAX_TURN: '0.3' },
    });
    expect(kind).toBe('timeout');
  });

  it('refuses to start with CONFIG_INVALID when system.yaml is out of range', async () => {
    await expect(runLongTurn({ systemYaml: 'defaults:\n  task_timeout: 5\n' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/task_timeout/) as unknown,
    });
  });
});
