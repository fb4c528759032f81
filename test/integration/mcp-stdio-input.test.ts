import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { CLI_ENTRY, TSX_LOADER } from '../fixtures/run-cli.js';

const replySchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
type Reply = z.infer<typeof replySchema>;

/** 10 MiB: the line limit of `musubi mcp` (and of the SDK's stdio transport). */
const LIMIT_BYTES = 10 * 1024 * 1024;
const REPLY_TIMEOUT_MS = 10_000;

let dir: string;

/**
 * One `musubi mcp` child spoken to line by line, initialized. Disposing it ends stdin and expects a
 * clean exit (code 0).
 */
class RawMcpSession implements AsyncDisposable {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #replies: Reply[] = [];
  readonly #waiters = new Set<() => void>();
  #stderr = '';
  #nextId = 1;

  constructor(agent: string) {
    const args = ['--import', TSX_LOADER, CLI_ENTRY, '--store', `sqlite:${join(dir, 'bus.db')}`];
    this.#child = spawn(process.execPath, [...args, 'mcp', '--agent', agent], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      // stdout carries MCP and nothing else: every line is a JSON-RPC reply.
      this.#replies.push(replySchema.parse(JSON.parse(line)));
      this.#wake();
    });
    this.#child.on('close', this.#wake);
  }

  static async open(agent: string): Promise<RawMcpSession> {
    const session = new RawMcpSession(agent);
    const id = session.newId();
    const params = {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '0' },
    };
    await session.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params }));
    expect(await session.nextReply()).toMatchObject({ id, result: { serverInfo: { name: 'musubi' } } });
    await session.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return session;
  }

  newId(): number {
    return this.#nextId++;
  }

  async writeLine(line: string): Promise<void> {
    if (!this.#child.stdin.write(`${line}\n`)) await once(this.#child.stdin, 'drain');
  }

  /** The first reply not taken yet; rejects after REPLY_TIMEOUT_MS (the bug was silence) or on exit. */
  async nextReply(): Promise<Reply> {
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    for (;;) {
      const [reply] = this.#replies.splice(0, 1);
      if (reply !== undefined) return reply;
      const { exitCode, signalCode } = this.#child;
      if (exitCode !== null || signalCode !== null)
        throw new Error(`musubi mcp exited (${exitCode ?? signalCode}): ${this.#stderr}`);
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0)
        throw new Error(`no reply within ${REPLY_TIMEOUT_MS} ms; stderr: ${this.#stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, remainingMs);
        const waiters = this.#waiters;
        function done(): void {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        waiters.add(done);
      });
    }
  }

  /** Sends a ping and expects its answer next: the session still works after whatever came before. */
  async expectPingAnswered(): Promise<void> {
    const id = this.newId();
    await this.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    expect(await this.nextReply()).toEqual({ jsonrpc: '2.0', id, result: {} });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const child = this.#child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'close');
      child.stdin.end();
      expect(await exited).toEqual([0, null]);
    }
  }

  readonly #wake = (): void => {
    for (const waiter of [...this.#waiters]) waiter();
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-mcp-input-'));
});

afterAll(async () => {
  await expectNoLiveChildren(15_000);
  await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('mcp - musubi mcp answers bad input lines over stdio and goes on', () => {
  it('answers a line over 10 MiB with an error naming the limit, then answers the next request', async () => {
    await using session = await RawMcpSession.open('erin');
    const pad = 'x'.repeat(LIMIT_BYTES);
    await session.writeLine(
      JSON.stringify({ jsonrpc: '2.0', id: session.newId(), method: 'ping', params: { pad } }),
    );
    const reply = await session.nextReply();
    expect(reply).toMatchObject({
      id: null,
      error: { code: ErrorCode.InvalidRequest, data: { code: 'GATEWAY_FRAME_TOO_LARGE' } },
    });
    expect(reply.error?.message).toContain(`${LIMIT_BYTES} bytes (10 MiB)`);
    await session.expectPingAnswered();
  });

  it('answers a line that is not JSON with a parse error', async () => {
    await using session = await RawMcpSession.open('frank');
    await session.writeLine('this is not json {');
    expect(await session.nextReply()).toMatchObject({
      id: null,
      error: { code: ErrorCode.ParseError, data: { code: 'GATEWAY_FRAME_INVALID' } },
    });
    await session.expectPingAnswered();
  });

  it('answers a JSON-RPC batch with one invalid-request error, since MCP dropped batches', async () => {
    await using session = await RawMcpSession.open('grace');
    await session.writeLine(JSON.stringify([{ jsonrpc: '2.0', id: session.newId(), method: 'ping' }]));
    const reply = await session.nextReply();
    expect(reply).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest } });
    expect(reply.error?.message).toMatch(/batches are not supported/);
    await session.expectPingAnswered();
  });

  it('answers a request whose id is an object with an invalid-request error and id null', async () => {
    await using session = await RawMcpSession.open('heidi');
    await session.writeLine(JSON.stringify({ jsonrpc: '2.0', id: {}, method: 'ping' }));
    const reply = await session.nextReply();
    expect(reply).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest } });
    expect(reply.error?.message).toMatch(/id must be a string or an integer/);
    await session.expectPingAnswered();
  });

  it('answers an invalid request that has a readable id under that id, and skips blank lines', async () => {
    await using session = await RawMcpSession.open('ivan');
    await session.writeLine('');
    await session.writeLine('  \r');
    await session.writeLine(
      JSON.stringify({ jsonrpc: '2.0', id: 'bad-params', method: 'ping', params: 'x' }),
    );
    expect(await session.nextReply()).toMatchObject({
      id: 'bad-params',
      error: { code: ErrorCode.InvalidRequest },
    });
    await session.expectPingAnswered();
  });
});
