import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LineClient, ask, startServer, type TestServer } from '../fixtures/agent-sync-harness.js';

describe('agent-sync wire - framing and bad input', () => {
  let server: TestServer;
  beforeEach(async () => (server = await startServer()));
  afterEach(() => server.close());

  it('answers two requests written in one segment in order on the same connection', async () => {
    const client = await LineClient.open(server.port);
    client.write('{"cmd": "peek", "agent": "agent-a"}\n{"cmd": "join", "agent": "agent-a"}\n');
    expect(await client.next()).toBe(
      '{"ok": true, "pending": 0, "phase": "IMPLEMENT", "round": 1, "implementer": ""}',
    );
    expect(await client.next()).toBe(
      '{"ok": true, "message": "Joined as agent-a", "phase": "IMPLEMENT", "round": 1, "implementer": "agent-a"}',
    );
    client.destroy();
  });

  it('answers a final line without newline when the client half-closes, then closes', async () => {
    const client = await LineClient.open(server.port);
    client.write('  {"cmd": "status"} \r');
    client.end();
    const reply = JSON.parse((await client.next()) ?? 'null') as { ok: boolean };
    expect(reply.ok).toBe(true);
    await client.closed();
  });

  it('keeps the connection usable after an empty line, a non-object and invalid UTF-8', async () => {
    const client = await LineClient.open(server.port);
    client.write('\n');
    expect(await client.next()).toBe('{"ok": false, "error": "Invalid JSON"}');
    for (const text of ['[1,2]', '"s"', '5']) {
      client.write(`${text}\n`);
      expect(await client.next()).toBe('{"ok": false, "error": "Invalid request: expected a JSON object"}');
    }
    client.write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    expect(await client.next()).toBe('{"ok": false, "error": "Invalid UTF-8"}');
    client.write('{"cmd": "sta\u0000tus"}\n\u0000\n{"cmd": NaN}\n');
    expect(await client.next()).toBe('{"ok": false, "error": "Invalid JSON"}');
    expect(await client.next()).toBe('{"ok": false, "error": "Invalid JSON"}');
    expect(await client.next()).toBe('{"ok": false, "error": "Invalid JSON"}');
    expect((await client.request({ cmd: 'status' })).ok).toBe(true);
    client.destroy();
  });

  it('processes a 65,536-byte line and refuses a 65,537-byte line, then closes', async () => {
    const client = await LineClient.open(server.port);
    const head = '{"cmd": "peek", "agent": "agent-a", "pad": "';
    const exact = head + 'x'.repeat(65_536 - head.length - 2) + '"}';
    expect(Buffer.byteLength(exact)).toBe(65_536);
    client.write(`${exact}\n`);
    expect((JSON.parse((await client.next()) ?? '') as { pending: number }).pending).toBe(0);
    client.write(`${exact.replace('"pad": "', '"pad": "y')}\n{"cmd": "status"}\n`);
    expect(await client.next()).toBe('{"ok": false, "error": "Request too long (max 65536 bytes)"}');
    expect(await client.next()).toBeNull();
    await client.closed();
  });

  it('refuses a 70 KB line sent without a newline and survives it', async () => {
    const client = await LineClient.open(server.port);
    client.write('z'.repeat(70 * 1024));
    expect(await client.next()).toBe('{"ok": false, "error": "Request too long (max 65536 bytes)"}');
    client.destroy();
    expect((await ask(server.port, { cmd: 'status' })).ok).toBe(true);
  });

  it('names the unknown command the way Python prints it', async () => {
    const client = await LineClient.open(server.port);
    client.write('{}\n{"cmd": null}\n{"cmd": ["x"]}\n{"cmd": "nope"}\n{"cmd": 1.0}\n');
    expect(await client.next()).toBe('{"ok": false, "error": "Unknown command: "}');
    expect(await client.next()).toBe('{"ok": false, "error": "Unknown command: None"}');
    expect(await client.next()).toBe('{"ok": false, "error": "Unknown command: [\'x\']"}');
    expect(await client.next()).toBe('{"ok": false, "error": "Unknown command: nope"}');
    expect(await client.next()).toBe('{"ok": false, "error": "Unknown command: 1.0"}');
    client.destroy();
  });

  it('writes Japanese raw and lone surrogates as escapes', async () => {
    const client = await LineClient.open(server.port);
    client.write('{"cmd": "send", "to": "agent-a", "text": "日本語 \\ud800!", "agent": "\\udfff"}\n');
    expect(await client.next()).toBe('{"ok": true}');
    client.send({ cmd: 'listen', agent: 'agent-a' });
    const raw = (await client.next()) ?? '';
    expect(raw).toMatch(
      /^\{"ok": true, "messages": \[\{"from": "\\udfff", "type": "message", "text": "日本語 \\ud800!", "ts": \d+\.?\d*\}\]\}$/,
    );
    client.destroy();
  });

  it('keeps serving after 10,000 rapid connections that send junk and vanish', async () => {
    const started = Date.now();
    const junk = [
      '{"cmd":"peek"',
      '\u0000\u0000\n',
      '[]\n',
      '{"cmd":"listen","agent":"x","timeout":5}\n',
      '',
    ];
    let done = 0;
    const batch = async (i: number): Promise<void> =>
      new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: server.port });
        socket.on('error', () => resolve());
        socket.on('close', () => resolve());
        socket.resume(); // read (and drop) replies so the server's close is seen
        socket.on('connect', () => {
          socket.write(junk[i % junk.length] ?? '');
          if (i % 2 === 0) socket.destroy();
          else socket.end();
        });
      }).then(() => void done++);
    for (let i = 0; i < 10_000; i += 250) {
      await Promise.all(Array.from({ length: 250 }, (_, k) => batch(i + k)));
    }
    expect(done).toBe(10_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await ask(server.port, { cmd: 'status' })).ok).toBe(true);
  });

  it('closes a connection that speaks HTTP without running the JSON lines of its body', async () => {
    await ask(server.port, { cmd: 'join', agent: 'agent-a' });
    const client = await LineClient.open(server.port);
    // What a web page's text/plain POST to this port looks like: its body lines are valid requests.
    const body = '\n{"cmd": "send", "to": "agent-a", "text": "from a web page"}\n';
    client.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: text/plain\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    await client.closed();
    expect((await ask(server.port, { cmd: 'peek', agent: 'agent-a' }))['pending']).toBe(0);
  });
});
