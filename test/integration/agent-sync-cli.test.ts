import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { ask, freePort, startServer, waitFor, type TestServer } from '../fixtures/agent-sync-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let server: TestServer;
let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
  server = await startServer({ agents: ['agent-a', 'agent-b'] });
});
afterAll(async () => {
  await server.close();
  await musubi.remove();
});

const sync = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  musubi.run(['agent-sync', ...args, '--port', String(server.port)], { cwd: server.cwd, env });

/** A TCP server that accepts and then either hangs or closes at once. */
async function misbehaving(mode: 'hang' | 'close'): Promise<{ server: Server; port: number }> {
  const s = createServer((socket) => {
    socket.resume();
    if (mode === 'close') socket.end();
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const address = s.address();
  return { server: s, port: address !== null && typeof address === 'object' ? address.port : 0 };
}

describe('musubi agent-sync client subcommands', () => {
  it('prints OK for send, indented raw-UTF-8 JSON for replies, ERROR and exit 1 on ok:false', async () => {
    const [joined, sent, bad] = await Promise.all([
      sync(['join', 'agent-a']),
      sync(['send', 'agent-a', 'agent-b', 'こんにちは']),
      sync(['send', 'agent-a', 'agent-z', 'x']),
    ]);
    expect(joined.code).toBe(0);
    expect(joined.stdout).toBe(
      '{\n  "message": "Joined as agent-a",\n  "phase": "IMPLEMENT",\n  "round": 1,\n  "implementer": "agent-a"\n}\n',
    );
    expect([sent.code, sent.stdout]).toEqual([0, 'OK\n']);
    expect([bad.code, bad.stderr]).toEqual([1, 'ERROR: Unknown target: agent-z\n']);
    const listened = await sync(['listen', 'agent-b', '--timeout', '1']);
    expect(listened.code).toBe(0);
    expect(listened.stdout).toMatch(
      /^\{\n {2}"messages": \[\n {4}\{\n {6}"from": "agent-a",\n {6}"type": "message",\n {6}"text": "こんにちは",\n {6}"ts": [\d.]+\n {4}\}\n {2}\]\n\}\n$/,
    );
  });

  it('exits 2 on usage errors and 1 with help on stdout without a subcommand', async () => {
    const [usage, bare, badInt] = await Promise.all([
      sync(['set-phase', 'MERGE']),
      musubi.run(['agent-sync'], { cwd: server.cwd }),
      sync(['listen', 'agent-a', '--timeout', 'soon']),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('MERGE');
    expect(bare.code).toBe(1);
    expect(bare.stdout).toContain('Usage: musubi agent-sync');
    expect(badInt.code).toBe(2);
  });

  it('refuses `serve --host` beyond loopback without --unauthenticated-network-access, naming the risk', async () => {
    const refused = await musubi.run(['agent-sync', 'serve', '--host', '0.0.0.0', '--port', '0'], {
      cwd: server.cwd,
      env: { MUSUBI_STORE: 'memory:' },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('no authentication');
    expect(refused.stderr).toContain('--unauthenticated-network-access');
  });

  it('sends test-result, discuss-done, write-log and say with the documented keys', async () => {
    const run = await sync([
      'test-result',
      'agent-b',
      '--passed',
      '--output',
      'fine',
      '--failures',
      'a',
      'b',
    ]);
    expect(run.stdout).toBe('{\n  "passed": true\n}\n');
    const status = (await ask(server.port, { cmd: 'status' }))['data'] as Record<string, unknown>;
    expect(status['test_result']).toMatchObject({
      agent: 'agent-b',
      passed: true,
      output: 'fine',
      failures: ['a', 'b'],
    });
    const log = await sync(['write-log', 'agent-a', 'notes']);
    expect(log.stdout).toBe('{\n  "log_file": "logs/v6/round_1.md"\n}\n');
    expect(await readFile(join(server.cwd, 'logs/v6/round_1.md'), 'utf8')).toMatch(/\n## {2}\/ agent-a — /);
    expect((await sync(['say', 'hello', '--to', 'agent-a'])).stdout).toBe('OK\n');
  });

  it('follows next_offset in get-discussion and prints every entry', async () => {
    await ask(server.port, { cmd: 'set-phase', phase: 'DISCUSS' });
    for (let i = 0; i < 5; i++)
      await ask(server.port, { cmd: 'discuss', agent: 'agent-a', text: `${i}`.padEnd(20_000, '-') });
    const run = await sync(['get-discussion', '--round', '1']);
    const printed = JSON.parse(run.stdout) as { discussion: unknown[]; total: number; next_offset: null };
    expect([printed.discussion.length, printed.total, printed.next_offset]).toEqual([5, 5, null]);
    await ask(server.port, { cmd: 'set-phase', phase: 'IMPLEMENT' });
  });

  it('refuses a request line over 65,536 bytes without sending it', async () => {
    const run = await sync(['send', 'agent-a', 'agent-b', 'x'.repeat(70_000)]);
    expect([run.code, run.stderr]).toEqual([1, 'ERROR: Request too long (max 65536 bytes)\n']);
  });

  it('fails peek at once when no server listens, and reports a closed connection', async () => {
    const port = await freePort();
    const closing = await misbehaving('close');
    const [peek, closed] = await Promise.all([
      musubi.run(['agent-sync', 'peek', 'agent-a', '--port', String(port)], { cwd: server.cwd }),
      musubi.run(['agent-sync', 'status', '--port', String(closing.port)], { cwd: server.cwd }),
    ]);
    closing.server.close();
    expect(peek.code).toBe(1);
    expect(peek.stderr).toMatch(/^ERROR: cannot connect \(.*ECONNREFUSED.*\)\n$/);
    expect([closed.code, closed.stderr]).toEqual([1, 'ERROR: connection closed\n']);
  });

  it('gives up waiting for a listen reply after its timeout plus 5 s', async () => {
    const hanging = await misbehaving('hang');
    const run = await musubi.run(
      ['agent-sync', 'listen', 'agent-a', '--timeout', '1', '--port', String(hanging.port)],
      {
        cwd: server.cwd,
      },
    );
    hanging.server.close();
    expect([run.code, run.stderr]).toEqual([1, 'ERROR: timed out waiting for reply\n']);
  });

  it('retries the connect every 3 s until the server comes up', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [musubi.entry, 'agent-sync', 'status', '--port', String(port)], {
      cwd: server.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(() => stderr.includes('(1)'), 15_000);
    const waitingSince = Date.now();
    const late = await startServer({ port });
    const code = await exited;
    await late.close();
    expect(stderr).toBe(`[agent_sync] Waiting for server on port ${port}... (1)\n`);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ data: { phase: 'IMPLEMENT' } });
    expect(Date.now() - waitingSince).toBeLessThan(3_500);
  });
});
