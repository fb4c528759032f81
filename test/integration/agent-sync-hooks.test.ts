import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, freePort, startServer, type TestServer } from '../fixtures/agent-sync-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let server: TestServer;
let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
  server = await startServer();
  await ask(server.port, { cmd: 'join', agent: 'agent-a' });
  await ask(server.port, { cmd: 'join', agent: 'agent-b' });
  await ask(server.port, { cmd: 'send', to: 'agent-b', text: 'one' });
  await ask(server.port, { cmd: 'send', to: 'agent-b', text: 'two' });
});
afterAll(async () => {
  await server.close();
  await musubi.remove();
});

const hook = (kind: string, input: unknown, env: NodeJS.ProcessEnv = {}, args: string[] = []) =>
  musubi.run(['agent-sync', 'hook', kind, ...args], {
    cwd: server.cwd,
    input: typeof input === 'string' ? input : JSON.stringify(input),
    env: { AGENT_SYNC_PORT: String(server.port), ...env },
  });

// Japanese texts as Python's json.dumps escapes them (ensure_ascii).
const MAILBOX =
  '\\u30e1\\u30fc\\u30eb\\u30dc\\u30c3\\u30af\\u30b9\\u306b2\\u4ef6\\u306e\\u30e1\\u30c3\\u30bb\\u30fc\\u30b8\\u3002\\u4eca\\u3059\\u3050\\u53d6\\u5f97';
const WAITING =
  '\\u30bf\\u30b9\\u30af\\u5f85\\u6a5f\\u4e2d\\u3002listen \\u3067\\u6b21\\u306e\\u6307\\u793a\\u3092\\u5f85\\u3066';
const NEW_MAIL =
  '\\ud83d\\udd14 [agent_sync] 2\\u4ef6\\u306e\\u65b0\\u7740\\u30e1\\u30c3\\u30bb\\u30fc\\u30b8';
const CHECK_NOW = '\\u4eca\\u3059\\u3050\\u78ba\\u8a8d';
const NO_QUESTIONS =
  '\\u8cea\\u554f\\u306f\\u7981\\u6b62\\u3002\\u6700\\u3082\\u5408\\u7406\\u7684\\u306a\\u4eee\\u5b9a\\u3092\\u7acb\\u3066\\u3066\\u4f5c\\u696d\\u3092\\u7d9a\\u884c\\u305b\\u3088\\u3002\\u4e0d\\u660e\\u70b9\\u306f TODO \\u30b3\\u30e1\\u30f3\\u30c8\\u3068\\u3057\\u3066\\u6b8b\\u305b\\u3002';

describe('musubi agent-sync hook (processes against a live server)', () => {
  it('block-stop fails open when the server is down and allows in SHUTDOWN', async () => {
    const down = await freePort();
    const other = await startServer();
    await ask(other.port, { cmd: 'shutdown' });
    const [noServer, shutdown] = await Promise.all([
      hook('block-stop', {}, { AGENT_SYNC_PORT: String(down) }),
      hook('block-stop', {}, { AGENT_SYNC_PORT: String(other.port) }),
    ]);
    await other.close();
    expect([noServer.code, noServer.stdout]).toEqual([0, '{}\n']);
    expect([shutdown.code, shutdown.stdout]).toEqual([0, '{}\n']);
  });

  it('block-stop blocks on pending mail even when stop_hook_active, byte for byte', async () => {
    const run = await hook('block-stop', { stop_hook_active: true }, { AGENT_SYNC_NAME: 'agent-b' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `{"hookSpecificOutput": {"hookEventName": "Stop", "decision": "block", "reason": "[agent_sync] phase=IMPLEMENT round=1 pending=2\\n${MAILBOX}:\\n  musubi agent-sync listen agent-b --timeout 30 --port ${server.port}\\n"}}\n`,
    );
  });

  it('block-stop allows a repeated stop with nothing pending and otherwise sends the agent to listen', async () => {
    const [active, idle, claude] = await Promise.all([
      hook('block-stop', { stop_hook_active: true }),
      hook('block-stop', {}, { AGENT_SYNC_LISTEN_CMD: 'python client.py listen' }),
      hook('block-stop', {}, {}, ['--format', 'claude']),
    ]);
    expect(active.stdout).toBe('{}\n');
    expect(idle.stdout).toBe(
      `{"hookSpecificOutput": {"hookEventName": "Stop", "decision": "block", "reason": "[agent_sync] phase=IMPLEMENT round=1\\n${WAITING}:\\n  python client.py listen agent-a --timeout 30 --port ${server.port}\\n"}}\n`,
    );
    expect(claude.stdout).toMatch(
      /^\{"decision": "block", "reason": "\[agent_sync\] phase=IMPLEMENT round=1\\n/,
    );
  });

  it('block-stop re-injects the first 600 characters of the agent file body', async () => {
    await mkdir(join(server.cwd, '.github', 'agents'), { recursive: true });
    const body = `${'本'.repeat(10)}${'b'.repeat(700)}`;
    await writeFile(join(server.cwd, '.github/agents/agent-a.agent.md'), `---\nname: a\n---\n\n${body}\n`);
    const run = await hook('block-stop', {});
    const reason = (JSON.parse(run.stdout) as { hookSpecificOutput: { reason: string } }).hookSpecificOutput
      .reason;
    expect(reason.endsWith(`\n--- core instructions ---\n${body.slice(0, 600)}\n`)).toBe(true);
    expect(run.stdout).toContain('\\u672c\\u672c');
  });

  it('block-stop reads no agent file outside .github/agents for a name with a path separator', async () => {
    await writeFile(join(server.cwd, 'outside.agent.md'), '---\nname: x\n---\n\nOUTSIDE-SECRET\n');
    const run = await hook('block-stop', {}, { AGENT_SYNC_NAME: '../../outside' });
    expect(run.stdout).toContain('hookSpecificOutput');
    expect(run.stdout).not.toContain('OUTSIDE-SECRET');
  });

  it('check-messages skips read-only tools without connecting and reports pending mail exactly', async () => {
    let connections = 0;
    const counter = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    const address = counter.address();
    const counterPort = address !== null && typeof address === 'object' ? address.port : 0;
    const [readOnly, claudeRead, mail, none] = await Promise.all([
      hook('check-messages', { tool_name: 'read_file' }, { AGENT_SYNC_PORT: String(counterPort) }),
      hook('check-messages', { tool_name: 'Read' }, { AGENT_SYNC_PORT: String(counterPort) }, [
        '--format',
        'claude',
      ]),
      hook('check-messages', { tool_name: 'run_in_terminal' }, { AGENT_SYNC_NAME: 'agent-b' }),
      hook('check-messages', { tool_name: 'run_in_terminal' }),
    ]);
    counter.close();
    expect([readOnly.stdout, claudeRead.stdout, connections]).toEqual(['{}\n', '{}\n', 0]);
    expect(mail.stdout).toBe(
      `{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "${NEW_MAIL} (phase=IMPLEMENT, round=1)\\n${CHECK_NOW}: musubi agent-sync listen agent-b --timeout 5 --port ${server.port}"}}\n`,
    );
    expect(none.stdout).toBe('{}\n');
  });

  it('block-questions denies questions in both formats and allows other tools', async () => {
    const [copilot, claude, other] = await Promise.all([
      hook('block-questions', { tool_name: 'vscode_askQuestions' }),
      hook('block-questions', { tool_name: 'AskUserQuestion' }, {}, ['--format', 'claude']),
      hook('block-questions', { tool_name: 'AskUserQuestion' }),
    ]);
    expect(copilot.stdout).toBe(
      `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "decision": "block", "reason": "${NO_QUESTIONS}"}}\n`,
    );
    expect(claude.stdout).toBe(
      `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "${NO_QUESTIONS}"}}\n`,
    );
    expect(other.stdout).toBe('{}\n');
  });

  it('exits 1 on empty or invalid stdin and on a non-integer AGENT_SYNC_PORT', async () => {
    const [empty, invalid, badPort] = await Promise.all([
      hook('block-stop', ''),
      hook('check-messages', '{nope'),
      hook('block-stop', {}, { AGENT_SYNC_PORT: 'ninety' }),
    ]);
    expect([empty.code, invalid.code, badPort.code]).toEqual([1, 1, 1]);
    expect(empty.stdout + invalid.stdout + badPort.stdout).toBe('');
    expect(badPort.stderr).toContain('AGENT_SYNC_PORT');
  });
});
