import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSystemClock } from '../../src/core/clock.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { createBus } from '../../src/bus/bus.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { TaskRegistry } from '../../src/tasks/task-registry.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { CLI_ENTRY, TSX_LOADER } from '../fixtures/run-cli.js';

interface McpAgent {
  readonly name: string;
  readonly client: Client;
  readonly stderr: () => string;
}

interface ToolReply {
  readonly isError: boolean;
  readonly text: string;
  readonly value: unknown;
}

const deliverySchema = z.object({ deliveryId: z.string(), message: z.object({ id: z.string() }) });
const textContent = z.array(z.object({ type: z.literal('text'), text: z.string() })).min(1);

let dir: string;
let storeUrl: string;
const agents: McpAgent[] = [];
let alice: McpAgent;
let bob: McpAgent;

function cliArgs(agent: string): string[] {
  return ['--import', TSX_LOADER, CLI_ENTRY, '--store', storeUrl, 'mcp', '--agent', agent];
}

/** An API key the agent CLI holds (so `musubi mcp`, its child, inherits it): never stored as sent. */
const AGENT_KEY = 'sk-ant-api03-MCPKEY0123456789abcdef';

async function startAgent(name: string): Promise<McpAgent> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: cliArgs(name),
    cwd: dir,
    env: { ...getDefaultEnvironment(), NO_COLOR: '1', ANTHROPIC_API_KEY: AGENT_KEY },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'musubi-test', version: '0.0.0' });
  await client.connect(transport);
  const agent = { name, client, stderr: () => stderr };
  agents.push(agent);
  return agent;
}

async function call(agent: McpAgent, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> {
  const result = await agent.client.callTool({ name, arguments: args });
  const [first] = textContent.parse(result.content);
  return { isError: result.isError === true, text: first?.text ?? '', value: result.structuredContent };
}

/** Seeds one task through the registry, as a team in the hub would, on the same SQLite file. */
async function seedTask(): Promise<void> {
  const clock = createSystemClock();
  const store = SqliteStore.open({ path: join(dir, 'bus.db'), clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { maxAttempts: 3, baseMs: 5_000, capMs: 300_000 } },
  });
  const registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
  const task = await registry.create({ owner: 'neko', kind: 'plugin_direct', title: 'Summarise the logs' });
  await registry.start(task.id);
  await registry.close();
  await bus.close();
  await store.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-mcp-'));
  storeUrl = `sqlite:${join(dir, 'bus.db')}`;
  await seedTask();
  [alice, bob] = await Promise.all([startAgent('alice'), startAgent('bob')]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(agents.map((a) => a.client.close()));
  await expectNoLiveChildren(15_000);
  await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('mcp - musubi mcp over stdio with the SDK client', () => {
  it('lists all eight tools, each with a description and an input schema', async () => {
    const { tools } = await alice.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['ack', 'broadcast', 'peek', 'receive', 'say', 'send', 'status', 'tasks'].sort(),
    );
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
    }
    const send = tools.find((t) => t.name === 'send');
    expect(send?.inputSchema.required).toEqual(expect.arrayContaining(['to', 'type', 'body']));
    expect(send?.inputSchema.properties?.['to']).toMatchObject({
      type: 'string',
      pattern: expect.any(String),
    });
    expect(tools.find((t) => t.name === 'receive')?.description).toMatch(/MUST call ack/);
  });

  it('delivers a message from one agent to another: send, peek, receive with a lease, ack', async () => {
    const sent = await call(alice, 'send', { to: 'bob', type: 'note', body: 'hello bob', thread: 't-1' });
    expect(sent).toMatchObject({ isError: false, value: { to: 'bob', isDuplicate: false } });
    const { id } = z.object({ id: z.string() }).parse(sent.value);

    const peeked = await call(bob, 'peek');
    expect(peeked.value).toMatchObject({
      mailbox: 'bob',
      counts: { ready: 1, leased: 0 },
      messages: [{ id, from: 'alice', type: 'note', body: 'hello bob', state: 'ready' }],
    });

    const received = await call(bob, 'receive', { timeoutMs: 5_000 });
    expect(received.value).toMatchObject({
      received: true,
      message: { id, from: 'alice', to: 'bob', type: 'note', body: 'hello bob', thread: 't-1', attempt: 1 },
    });
    const { deliveryId } = deliverySchema.parse(received.value);
    expect((await call(bob, 'peek')).value).toMatchObject({ counts: { ready: 0, leased: 1 } });

    expect((await call(bob, 'ack', { deliveryId })).value).toEqual({ acked: true, deliveryId });
    expect((await call(bob, 'peek')).value).toMatchObject({ counts: { total: 0 }, messages: [] });
  });

  it('masks a secret the agent holds in what it sends, and stores nothing of it', async () => {
    const sent = await call(alice, 'send', {
      to: 'bob',
      type: 'note',
      body: `401 invalid x-api-key ${AGENT_KEY}`,
    });
    expect(sent.isError).toBe(false);
    const received = await call(bob, 'receive', { timeoutMs: 2_000 });
    expect(JSON.stringify(received.value)).toContain('401 invalid x-api-key sk-ant-…[masked]');
    expect(JSON.stringify(received.value)).not.toContain(AGENT_KEY);
    const { deliveryId } = deliverySchema.parse(received.value);
    expect((await call(bob, 'ack', { deliveryId })).isError).toBe(false);
  });

  it('returns an empty result, not an error, when receive times out', async () => {
    const reply = await call(bob, 'receive', { timeoutMs: 100 });
    expect(reply.isError).toBe(false);
    expect(reply.value).toMatchObject({ received: false, waitedMs: expect.any(Number) });
  });

  it('answers bad input with tool errors that name our error code', async () => {
    const badName = await call(alice, 'send', { to: 'no spaces', type: 'note', body: 'x' });
    expect(badName.isError).toBe(true);
    expect(badName.text).toContain('MAILBOX_NAME_INVALID');

    const unknown = await call(alice, 'ack', { deliveryId: 'alice:0000000000:1:1' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/^NOT_FOUND: /);
    expect(unknown.value).toMatchObject({ error: { code: 'NOT_FOUND' } });

    const missing = await call(alice, 'send', { to: 'bob', body: 'no type' });
    expect(missing).toMatchObject({ isError: true, text: expect.stringContaining('USAGE_INVALID') });
    const range = await call(alice, 'receive', { timeoutMs: -1 });
    expect(range).toMatchObject({ isError: true, text: expect.stringContaining('USAGE_INVALID') });
  });

  it('shows every agent with its protocol, state and mailbox counts in status', async () => {
    await call(alice, 'send', { to: 'carol', type: 'note', body: 'for later' });
    const status = await call(alice, 'status');
    expect(status.value).toMatchObject({
      you: 'alice',
      agents: expect.arrayContaining([
        expect.objectContaining({ name: 'alice', protocol: 'mcp', state: 'idle' }),
        expect.objectContaining({
          name: 'bob',
          protocol: 'mcp',
          mailbox: expect.objectContaining({ ready: 0 }),
        }),
      ]),
      otherMailboxes: expect.arrayContaining([expect.objectContaining({ name: 'carol', ready: 1 })]),
    });
  });

  it('lists registry tasks, filtered by state', async () => {
    const all = await call(alice, 'tasks');
    expect(all.value).toMatchObject({
      total: 1,
      tasks: [{ owner: 'neko', kind: 'plugin_direct', state: 'running', title: 'Summarise the logs' }],
    });
    expect((await call(alice, 'tasks', { states: ['completed'] })).value).toEqual({ total: 0, tasks: [] });
    const bad = await call(alice, 'tasks', { states: ['sleeping'] });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('USAGE_INVALID') });
  });

  it('says a message to everyone else, and broadcasts to a named list', async () => {
    const said = await call(alice, 'say', { text: 'standup in 5' });
    expect(said.value).toMatchObject({ recipients: expect.arrayContaining(['bob', 'carol']) });
    expect(z.object({ recipients: z.array(z.string()) }).parse(said.value).recipients).not.toContain('alice');

    const heard = await call(bob, 'receive', { timeoutMs: 5_000 });
    expect(heard.value).toMatchObject({ message: { type: 'say', from: 'alice', body: 'standup in 5' } });
    await call(bob, 'ack', { deliveryId: deliverySchema.parse(heard.value).deliveryId });

    const sent = await call(bob, 'broadcast', {
      to: ['alice', 'carol'],
      type: 'review',
      body: 'please look',
    });
    expect(sent.value).toMatchObject({ recipients: ['alice', 'carol'], duplicates: [] });
    expect((await call(alice, 'peek')).value).toMatchObject({ messages: [{ type: 'review', from: 'bob' }] });
  });

  it('answers a waiting receive, exits with code 0 and marks the agent offline when stdin closes', async () => {
    const child = spawn(process.execPath, cliArgs('dave'), { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.resume();
    const exited = once(child, 'close');
    const replies: Array<{ id?: unknown; result?: unknown }> = [];
    const lines = createInterface({ input: child.stdout });
    const initialized = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        // stdout carries MCP and nothing else: every line is a JSON-RPC message.
        replies.push(
          z
            .object({ jsonrpc: z.literal('2.0'), id: z.unknown(), result: z.unknown() })
            .parse(JSON.parse(line)),
        );
        resolve();
      }),
    );
    const write = (message: object): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    write({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    await initialized;
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    write({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'receive', arguments: { timeoutMs: 50_000 } },
    });
    child.stdin.end();

    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(replies.find((r) => r.id === 2)?.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^ABORTED: /) }],
    });
    const status = await call(alice, 'status');
    expect(status.value).toMatchObject({
      agents: expect.arrayContaining([
        expect.objectContaining({ name: 'dave', protocol: 'mcp', state: 'offline' }),
      ]),
    });
  }, 30_000);
});
