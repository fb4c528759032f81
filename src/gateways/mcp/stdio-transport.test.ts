import { PassThrough, Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { StdioTransport } from './stdio-transport.js';

/** An output that takes one write at a time and lets the test decide when the client has read it. */
class HeldOutput extends Writable {
  readonly lines: unknown[] = [];
  readonly #held: Array<() => void> = [];
  constructor() {
    super({ highWaterMark: 1 });
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(JSON.parse(chunk.toString('utf8')));
    this.#held.push(done);
  }
  release(): void {
    for (const done of this.#held.splice(0)) done();
  }
}

/** An output that is always ready and records each line as parsed JSON. */
class RecordingOutput extends Writable {
  readonly lines: unknown[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) this.lines.push(JSON.parse(line));
    done();
  }
}

async function setup(options: { output?: Writable; maxLineBytes?: number } = {}): Promise<{
  input: PassThrough;
  output: Writable;
  transport: StdioTransport;
  messages: JSONRPCMessage[];
  errors: Error[];
  feed: (text: string | Buffer) => Promise<void>;
}> {
  const input = new PassThrough();
  const output = options.output ?? new RecordingOutput();
  const transport = new StdioTransport({
    input,
    output,
    ...(options.maxLineBytes !== undefined && { maxLineBytes: options.maxLineBytes }),
  });
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (message) => void messages.push(message);
  transport.onerror = (error) => void errors.push(error);
  await transport.start();
  const feed = async (text: string | Buffer): Promise<void> => {
    input.write(text);
    // PassThrough hands chunks to 'data' listeners on a later turn.
    await nextTurn();
  };
  return { input, output, transport, messages, errors, feed };
}

const ping = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

describe('mcp - stdio transport', () => {
  it('delivers each valid line as a message, also when lines span chunks', async () => {
    const { feed, messages, errors } = await setup();
    const line = ping(1);
    await feed(line.slice(0, 5));
    await feed(`${line.slice(5)}${ping(2)}`);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(errors).toEqual([]);
  });

  it('answers an over-long line with id null and the limit, reports it, and reads the next line', async () => {
    const output = new RecordingOutput();
    const { feed, messages, errors } = await setup({ output, maxLineBytes: 64 });
    await feed(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"${'x'.repeat(100)}`);
    await feed(`${'y'.repeat(1000)}"}}\n${ping(3)}`);
    expect(output.lines).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: ErrorCode.InvalidRequest,
          message: expect.stringContaining('at most 64 bytes'),
          data: { code: 'GATEWAY_FRAME_TOO_LARGE', details: { maxLineBytes: 64 } },
        },
      },
    ]);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    expect(errors.map((e) => isMusubiError(e, 'GATEWAY_FRAME_TOO_LARGE'))).toEqual([true]);
  });

  it.each([
    ['not JSON', 'nope {', null, ErrorCode.ParseError, /not JSON/],
    ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), null, ErrorCode.ParseError, /not UTF-8/],
    ['a batch', JSON.stringify([JSON.parse(ping(1))]), null, ErrorCode.InvalidRequest, /batches/],
    ['an empty batch', '[]', null, ErrorCode.InvalidRequest, /batches/],
    ['a number', '42', null, ErrorCode.InvalidRequest, /is an object/],
    ['an object id', '{"jsonrpc":"2.0","id":{},"method":"ping"}', null, ErrorCode.InvalidRequest, /id must/],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}', null, ErrorCode.InvalidRequest, /id must/],
    [
      'a bad request',
      '{"jsonrpc":"2.0","id":"r1","method":"ping","params":1}',
      'r1',
      ErrorCode.InvalidRequest,
      /not a JSON-RPC/,
    ],
    [
      'a bad response',
      '{"jsonrpc":"2.0","id":4,"result":"x"}',
      null,
      ErrorCode.InvalidRequest,
      /not a JSON-RPC/,
    ],
    [
      'JSON-RPC 1.0',
      '{"jsonrpc":"1.0","id":5,"method":"ping"}',
      5,
      ErrorCode.InvalidRequest,
      /not a JSON-RPC/,
    ],
  ])('answers %s with a JSON-RPC error and goes on', async (_name, line, id, code, message) => {
    const output = new RecordingOutput();
    const { feed, messages, errors } = await setup({ output });
    await feed(Buffer.concat([Buffer.from(line), Buffer.from(`\n${ping(6)}`)]));
    expect(output.lines).toEqual([
      {
        jsonrpc: '2.0',
        id,
        error: { code, message: expect.stringMatching(message), data: { code: 'GATEWAY_FRAME_INVALID' } },
      },
    ]);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 6, method: 'ping' }]);
    expect(errors.map((e) => isMusubiError(e, 'GATEWAY_FRAME_INVALID'))).toEqual([true]);
  });

  it('skips blank lines without a reply', async () => {
    const output = new RecordingOutput();
    const { feed, messages, errors } = await setup({ output });
    await feed(`\n  \r\n${ping(1)}`);
    expect(output.lines).toEqual([]);
    expect(messages).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('never quotes the rejected line in the reply or the reported error', async () => {
    const output = new RecordingOutput();
    const { feed, errors } = await setup({ output });
    await feed('secret-token-123\n');
    expect(JSON.stringify(output.lines)).not.toContain('secret');
    expect(errors[0]?.message).not.toContain('secret');
  });

  it('resolves send once a full output drained, and stops reading input meanwhile', async () => {
    const output = new HeldOutput();
    const { input, transport, feed, messages } = await setup({ output });
    let isSent = false;
    const sent = transport.send({ jsonrpc: '2.0', id: 1, result: {} }).then(() => void (isSent = true));
    const second = transport.send({ jsonrpc: '2.0', id: 2, result: {} });
    await nextTurn();
    expect({ isSent, isPaused: input.isPaused(), drainListeners: output.listenerCount('drain') }).toEqual({
      isSent: false,
      isPaused: true,
      drainListeners: 1,
    });
    output.release();
    await nextTurn();
    output.release();
    await Promise.all([sent, second]);
    expect(output.lines).toHaveLength(2);
    expect(input.isPaused()).toBe(false);
    await feed(ping(7));
    expect(messages).toHaveLength(1);
  });

  it('rejects a send waiting for drain when the output closes', async () => {
    const output = new HeldOutput();
    const { transport } = await setup({ output });
    const sent = transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    output.destroy();
    await expect(sent).rejects.toMatchObject({ code: 'GATEWAY_UNAVAILABLE' });
    await expect(transport.send({ jsonrpc: '2.0', id: 2, result: {} })).rejects.toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
    });
  });

  it('removes its listeners on close, calls onclose once, and refuses to send or start again', async () => {
    const output = new HeldOutput();
    const { input, transport } = await setup({ output });
    const before = ['close', 'error', 'drain'].map((e) => output.listenerCount(e));
    const waiting = transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    let closes = 0;
    transport.onclose = () => void closes++;
    await transport.close();
    await transport.close();
    await expect(waiting).resolves.toBeUndefined();
    expect(closes).toBe(1);
    expect(input.listenerCount('data') + input.listenerCount('error')).toBe(0);
    expect(['close', 'error', 'drain'].map((e) => output.listenerCount(e))).toEqual(before);
    expect(input.isPaused()).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', id: 2, result: {} })).rejects.toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
    });
    await expect(transport.start()).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('leaves input flowing on close when another listener still reads it', async () => {
    const { input, transport } = await setup();
    const other = (): void => undefined;
    input.on('data', other);
    await transport.close();
    expect(input.isPaused()).toBe(false);
    input.off('data', other);
  });
});
