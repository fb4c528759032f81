import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { DrainingTransport } from './draining-transport.js';

/** An inner transport that records what is sent and lets the test deliver incoming messages. */
class RecordingTransport implements Transport {
  readonly sent: JSONRPCMessage[] = [];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  start(): Promise<void> {
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.sent.push(message);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

const request = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} });

function setup(): {
  inner: RecordingTransport;
  outer: DrainingTransport;
  clock: FakeClock;
  seen: JSONRPCMessage[];
} {
  const inner = new RecordingTransport();
  const clock = new FakeClock();
  const outer = new DrainingTransport(inner, clock);
  const seen: JSONRPCMessage[] = [];
  outer.onmessage = (m) => void seen.push(m);
  return { inner, outer, clock, seen };
}

describe('mcp - draining transport', () => {
  it('resolves drained at once when no request awaits an answer', async () => {
    const { outer } = setup();
    await expect(outer.drained(1000)).resolves.toBeUndefined();
  });

  it('resolves drained once every request got its response or error', async () => {
    const { inner, outer, seen } = setup();
    inner.deliver(request(1));
    inner.deliver(request(2));
    expect(seen).toHaveLength(2);
    let isDrained = false;
    const drained = outer.drained(60_000).then(() => void (isDrained = true));
    await outer.send({ jsonrpc: '2.0', id: 1, result: {} });
    await Promise.resolve();
    expect(isDrained).toBe(false);
    await outer.send({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } });
    await drained;
    expect(inner.sent).toHaveLength(2);
  });

  it('counts a request the client cancelled as answered', async () => {
    const { inner, outer } = setup();
    inner.deliver(request(7));
    const drained = outer.drained(60_000);
    inner.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    await expect(drained).resolves.toBeUndefined();
  });

  it('gives up waiting after the timeout', async () => {
    const { inner, outer, clock } = setup();
    inner.deliver(request(3));
    const drained = outer.drained(5_000);
    clock.advance(5_000);
    await expect(drained).resolves.toBeUndefined();
  });

  it('forwards close from the inner transport', async () => {
    const { outer } = setup();
    let isClosed = false;
    outer.onclose = () => void (isClosed = true);
    await outer.close();
    expect(isClosed).toBe(true);
  });
});
