import { link, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isMusubiError } from '../../src/core/errors.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { AgentSocketServer } from '../../src/gateways/yadon/agent-socket-server.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import {
  ask,
  rawExchange,
  shortTempDir,
  startYadonHarness,
  type YadonHarness,
} from '../fixtures/yadon-harness.js';

const opened: Array<{ close(): Promise<unknown> }> = [];
const track = <T extends { close(): Promise<unknown> }>(x: T): T => (opened.push(x), x);

afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
  await expectNoLiveChildren(10_000);
});

const listen = (server: Server, path: string) =>
  new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, () => resolve()));
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

async function harness(options: Parameters<typeof startYadonHarness>[0] = {}): Promise<YadonHarness> {
  return track(await startYadonHarness(options));
}

async function bubbles(h: YadonHarness): Promise<Array<Record<string, unknown>>> {
  const events = await h.bus.readEvents({ limit: 1000 });
  return events.flatMap((e) => (e.type === 'agent.bubble' && 'data' in e ? [e.data] : []));
}

describe('yadon gateway sockets', () => {
  it('creates every agent and pet socket in the socket directory with mode 0600', async () => {
    const h = await harness({ workerCount: 2 });
    const names = (await readdir(h.dir)).filter((n) => n.endsWith('.sock')).sort();
    expect(names).toEqual(
      [
        'yadon-agent-yadoran.sock',
        'yadon-agent-yadon-1.sock',
        'yadon-agent-yadon-2.sock',
        'yadon-pet-yadoran.sock',
        'yadon-pet-1.sock',
        'yadon-pet-2.sock',
      ].sort(),
    );
    for (const name of names) {
      const info = await lstat(`${h.dir}/${name}`);
      expect(info.isSocket()).toBe(true);
      expect(info.mode & 0o777).toBe(0o600);
    }
    expect(h.gateway.address()).toEqual({ kind: 'unix', path: `${h.dir}/yadon-agent-yadoran.sock` });
  });

  it('refuses a second gateway on the same directory while the first keeps serving', async () => {
    const first = await harness();
    let err: unknown;
    try {
      await startYadonHarness({ dir: first.dir, socketDir: first.dir });
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')).toBe(true);
    expect(await ask(first.socket('yadon-2'), { type: 'status' })).toMatchObject({ state: 'idle' });
    expect(await ask(first.socket('yadoran'), { type: 'status' })).toMatchObject({ state: 'idle' });
  });

  it('replaces a stale socket and a regular file at start; a directory refuses', async () => {
    const { dir, cleanup } = await shortTempDir();
    track({ close: cleanup });
    const stale = createServer();
    await listen(stale, `${dir}/tmp.sock`);
    await link(`${dir}/tmp.sock`, `${dir}/yadon-agent-yadon-1.sock`);
    await closeServer(stale); // libuv unlinks tmp.sock; the hard link stays behind as a stale socket
    await writeFile(`${dir}/yadon-pet-1.sock`, 'a regular file');
    const h = await harness({ socketDir: dir, dir, keepDir: true, workerCount: 1 });
    expect(await ask(h.socket('yadon-1'), { type: 'status' })).toMatchObject({ from: 'yadon-1' });
    expect((await lstat(`${dir}/yadon-pet-1.sock`)).isSocket()).toBe(true);
    await h.close();
    await mkdir(`${dir}/yadon-agent-yadon-1.sock`);
    let err: unknown;
    try {
      await startYadonHarness({ socketDir: dir, dir, keepDir: true, workerCount: 1 });
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')).toBe(true);
    expect((await lstat(`${dir}/yadon-agent-yadon-1.sock`)).isDirectory()).toBe(true);
  });

  it('refuses a socket path longer than the AF_UNIX limit and a socket dir whose parent is missing, naming the path', async () => {
    const { dir, cleanup } = await shortTempDir();
    track({ close: cleanup });
    const long = `${dir}/${'d'.repeat(100)}`;
    await mkdir(long);
    const missing = `${dir}/no/such`;
    for (const socketDir of [long, missing]) {
      let err: unknown;
      try {
        await startYadonHarness({ socketDir, dir: socketDir, keepDir: true });
      } catch (e) {
        err = e;
      }
      expect(isMusubiError(err, 'GATEWAY_UNAVAILABLE')).toBe(true);
      expect((err as Error).message).toContain(socketDir);
    }
  });

  it('leaves a socket path that now belongs to another server when it stops', async () => {
    const h = await harness({ keepDir: true, workerCount: 1 });
    const path = h.socket('yadon-1');
    const other = createServer((s) => s.resume().end('{"type": "status_response", "state": "other"}'));
    await rm(path);
    await listen(other, path);
    await h.close();
    expect(JSON.parse((await rawExchange(path, '{}')).text)).toMatchObject({ state: 'other' });
    await closeServer(other);
    await rm(h.dir, { recursive: true, force: true });
  });

  it('answers a half-closed request with exactly one JSON document, raw UTF-8, no newline, then end of stream', async () => {
    const h = await harness();
    const reply = await rawExchange(h.socket('yadon-1'), '{"type": "unknown"}\n');
    expect(reply.hasEnded).toBe(true);
    expect(reply.text).toBe(
      '{"type": "error", "from": "yadon-1", "message": "不明なメッセージタイプ: unknown"}',
    );
    expect(reply.bytes.includes(Buffer.from('不明', 'utf8'))).toBe(true);
    for (let i = 0; i < 20; i++) {
      expect(await ask(h.socket('yadon-1'), { type: 'status' })).toEqual({
        type: 'status_response',
        from: 'yadon-1',
        state: 'idle',
        current_task: null,
      });
    }
  });

  it('answers malformed requests with the error envelopes of spec 5 and stays idle', async () => {
    const h = await harness({ timings: { requestInactivityMs: 300 } });
    const path = h.socket('yadoran');
    const message = async (body: string | Buffer, halfClose = true) =>
      (JSON.parse((await rawExchange(path, body, { halfClose })).text) as { message: string }).message;
    expect(await message('')).toMatch(/^JSONパースエラー/);
    expect(await message('not json')).toMatch(/^JSONパースエラー/);
    expect(await message('{}')).toBe('不明なメッセージタイプ: ');
    expect(await message(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]))).toMatch(/^接続処理エラー/);
    expect(await message('[1, 2]')).toMatch(/^接続処理エラー/);
    expect(await message('{"type": "task", "payload": "a string"}')).toMatch(/^接続処理エラー/);
    expect(await message(Buffer.alloc(5 * 1024 * 1024, 0x61))).toMatch(/^JSONパースエラー/);
    expect(await message(Buffer.alloc(64 * 1024 * 1024 + 1, 0x20))).toBe('接続処理エラー: message too large');
    expect(await message('{"type": "status"', false)).toBe('接続処理エラー: timed out');
    expect(await ask(path, { type: 'status' })).toMatchObject({ state: 'idle', current_task: null });
    expect(await ask(h.socket('yadon-1'), { type: 'status' })).toMatchObject({
      state: 'idle',
      current_task: null,
    });
  });

  it('times a silent client out after 600 s of inactivity (fake clock)', async () => {
    const { dir, cleanup } = await shortTempDir();
    track({ close: cleanup });
    const clock = new FakeClock();
    const server = track(
      new AgentSocketServer({
        path: `${dir}/a.sock`,
        clock,
        logger: createSilentLogger(),
        handler: { name: 'yadon-1', handle: () => Promise.resolve({}) },
      }),
    );
    await server.start();
    const reply = rawExchange(`${dir}/a.sock`, '{"type": ', { halfClose: false });
    await waitFor(() => clock.pendingTimers() > 0, 5000, 'the connection to be read');
    clock.advance(599_999);
    clock.advance(1);
    expect((await reply).text).toBe(
      '{"type": "error", "from": "yadon-1", "message": "接続処理エラー: timed out"}',
    );
  });

  it('round-trips a 1 MiB instruction through a worker', async () => {
    const h = await harness();
    const text = 'あいうえお'.repeat(70_000).slice(0, 349_526); // ~1 MiB of UTF-8
    const instruction = `reply <<EOF\n${text}\nEOF`;
    expect(Buffer.byteLength(instruction)).toBeGreaterThan(1024 * 1024);
    const reply = await ask(h.socket('yadon-1'), { type: 'task', id: 'big', payload: { instruction } });
    expect(reply).toMatchObject({ id: 'big', status: 'success', payload: { output: text } });
  });

  it('reports workers in order, a missing socket as stopped and a silent one as unreachable', async () => {
    const h = await harness({ workerCount: 3, timings: { statusProbeMs: 300 } });
    await rm(h.socket('yadon-2'));
    await rm(h.socket('yadon-3'));
    const silent = createServer(() => undefined);
    await listen(silent, h.socket('yadon-3'));
    const reply = await ask(h.socket('yadoran'), { type: 'status' });
    expect(JSON.stringify(reply)).toBe(
      JSON.stringify({
        type: 'status_response',
        from: 'yadoran',
        state: 'idle',
        current_task: null,
        workers: { 'yadon-1': 'idle', 'yadon-2': 'stopped', 'yadon-3': 'unreachable' },
      }),
    );
    silent.close(); // its one connection is gone with the probe's deadline
  });

  it('pets never reply; defaults, string durations and drops follow spec 3.6', async () => {
    const h = await harness({ workerCount: 1 });
    const pet = `${h.dir}/yadon-pet-1.sock`;
    expect((await rawExchange(pet, '{"text": "hi"}')).bytes.length).toBe(0);
    await rawExchange(pet, '{"text": "two", "type": "hook", "duration": "2_500"}');
    await rawExchange(pet, '{"text": "dropped", "duration": "abc"}');
    await rawExchange(pet, '{"text": ""}');
    await rawExchange(pet, '[1]');
    await rawExchange(pet, `{"text": "${'x'.repeat(70_000)}"}`);
    await rawExchange(`${h.dir}/yadon-pet-yadoran.sock`, '{"text": "boss", "duration": 1.9}');
    await waitFor(async () => (await bubbles(h)).length >= 3, 10_000, 'three bubbles');
    expect(await bubbles(h)).toEqual([
      { agent: 'yadon-1', pet: '1', text: 'hi', bubbleType: 'normal', durationMs: 4000 },
      { agent: 'yadon-1', pet: '1', text: 'two', bubbleType: 'hook', durationMs: 2500 },
      { agent: 'yadoran', pet: 'yadoran', text: 'boss', bubbleType: 'normal', durationMs: 1 },
    ]);
  });
});
