import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import type { CliRunOptions } from '../fixtures/run-cli.js';

let dir: string;
let musubi: BundledCli;
beforeAll(async () => {
  [dir, musubi] = await Promise.all([mkdtemp(join(tmpdir(), 'musubi-log-format-')), bundleCli()]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await musubi.remove();
});

const env = { MUSUBI_STORE: 'sqlite:bus.db', MUSUBI_MAX_ATTEMPTS: '1' };
const options = (extra: NodeJS.ProcessEnv = {}): CliRunOptions => ({ cwd: dir, env: { ...env, ...extra } });
const JSON_LINE = /^\{"level"/m;
const READABLE_DEAD_LETTER =
  /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: bus: message dead-lettered \{.*"reason":"boom"/m;

/** Sends a message to a fresh mailbox and receives it; the delivery dead-letters on its first nack. */
async function lastAttempt(mailbox: string): Promise<string> {
  expect(
    (await musubi.run(['bus', 'send', '--to', mailbox, '--type', 't', '--body', 'x'], options())).code,
  ).toBe(0);
  const received = await musubi.run(['bus', 'receive', mailbox, '--timeout', '1000', '--json'], options());
  const delivery: { deliveryId: string } = JSON.parse(received.stdout);
  return delivery.deliveryId;
}

async function takePort(): Promise<Server & { port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

describe('cli - log lines on a terminal and off it', () => {
  it('prints a readable log line, no JSON, when a dead-lettering bus nack runs on a terminal', async () => {
    const id = await lastAttempt('tty-pretty');
    const run = await musubi.runOnTty(['bus', 'nack', id, '--reason', 'boom'], options());
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(JSON_LINE);
    expect(run.stdout).toMatch(READABLE_DEAD_LETTER);
    expect(run.stdout).toContain(`nacked ${id}: dead-lettered (boom)\n`);
  });

  it('writes JSON log lines to stderr when it is not a terminal', async () => {
    const id = await lastAttempt('pipe-json');
    const run = await musubi.run(['bus', 'nack', id, '--reason', 'boom'], options());
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`nacked ${id}: dead-lettered (boom)\n`);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      expect.objectContaining({ level: 40, component: 'bus', msg: 'message dead-lettered', reason: 'boom' }),
    ]);
  });

  it('writes JSON log lines on a terminal with --log-format json', async () => {
    const id = await lastAttempt('tty-json');
    const run = await musubi.runOnTty(
      ['--log-format', 'json', 'bus', 'nack', id, '--reason', 'boom'],
      options(),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\{"level":40,.*"msg":"message dead-lettered"\}$/m);
  });

  it('writes readable lines off a terminal with MUSUBI_LOG_FORMAT=pretty', async () => {
    const id = await lastAttempt('pipe-pretty');
    const run = await musubi.run(
      ['bus', 'nack', id, '--reason', 'boom'],
      options({ MUSUBI_LOG_FORMAT: 'pretty' }),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(READABLE_DEAD_LETTER);
    expect(run.stderr).not.toMatch(JSON_LINE);
  });

  it('refuses an unknown format from the flag (usage, exit 2) and from the environment (CONFIG_INVALID)', async () => {
    const flag = await musubi.run(['--log-format', 'xml', 'bus', 'peek', 'w'], options());
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("argument 'xml' is invalid. Allowed choices are pretty, json.");
    const fromEnv = await musubi.run(['bus', 'peek', 'w'], options({ MUSUBI_LOG_FORMAT: 'xml' }));
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toBe(
      'musubi: CONFIG_INVALID: environment variable MUSUBI_LOG_FORMAT must be one of pretty, json, got "xml"\n',
    );
  });
});

describe('cli - a taken port is one clean line, on a terminal too', () => {
  it('neko serve prints GATEWAY_ADDRESS_IN_USE alone and exits 1', async () => {
    const taken = await takePort();
    try {
      const args = ['--store', 'memory:', 'neko', 'serve', '--port', String(taken.port)];
      const line = `musubi: GATEWAY_ADDRESS_IN_USE: N.E.K.O. HTTP API cannot listen on 127.0.0.1:${taken.port}\n`;
      const piped = await musubi.run(args, { cwd: dir });
      expect([piped.code, piped.stdout, piped.stderr]).toEqual([1, '', line]);
      const onTty = await musubi.runOnTty(args, { cwd: dir });
      expect([onTty.code, onTty.stdout]).toEqual([1, line]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('up prints GATEWAY_ADDRESS_IN_USE alone and exits 1', async () => {
    const taken = await takePort();
    try {
      const args = ['--store', 'memory:', 'up', '--http-port', String(taken.port)];
      const line = `musubi: GATEWAY_ADDRESS_IN_USE: 127.0.0.1:${taken.port} is in use\n`;
      const piped = await musubi.run(args, { cwd: dir });
      expect([piped.code, piped.stdout, piped.stderr]).toEqual([1, '', line]);
      const onTty = await musubi.runOnTty(args, { cwd: dir });
      expect([onTty.code, onTty.stdout]).toEqual([1, line]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
