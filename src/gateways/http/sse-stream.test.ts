import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import { formatSseMessage, SseStream } from './sse-stream.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('sse stream - framing', () => {
  it('writes event, id, retry and one data line per line of data', () => {
    expect(formatSseMessage({ event: 'ready', id: '7', retryMs: 1000, data: 'a\nb\r\nc' })).toBe(
      'event: ready\nid: 7\nretry: 1000\ndata: a\ndata: b\ndata: c\n\n',
    );
    expect(formatSseMessage({ data: '' })).toBe('data: \n\n');
  });

  it('refuses CR or LF in event and id so a value cannot start a new field', () => {
    for (const bad of [{ event: 'x\ny' }, { id: '1\r' }]) {
      let caught: unknown;
      try {
        formatSseMessage({ data: 'd', ...bad });
      } catch (err) {
        caught = err;
      }
      expect(isMusubiError(caught, 'USAGE_INVALID')).toBe(true);
    }
  });
});

describe('sse stream - connection', () => {
  it('drops a client that stops reading once the slow-client limit passes', async () => {
    let stream: SseStream | undefined;
    const server = createServer((_req, res) => {
      stream = new SseStream({
        response: res,
        clock: createSystemClock(),
        heartbeatMs: 60_000,
        slowClientMs: 100,
      });
      stream.open();
      const chunk = 'x'.repeat(64 * 1024);
      const flood = async (): Promise<void> => {
        while (!stream?.signal.aborted) await stream?.send({ data: chunk });
      };
      void flood();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // never reads: the server's buffer fills up
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const started = Date.now();
    while (stream?.signal.aborted !== true) {
      if (Date.now() - started > 5_000) throw new Error('slow client was never dropped');
      await new Promise((r) => setTimeout(r, 20));
    }
    socket.destroy();
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });
});
