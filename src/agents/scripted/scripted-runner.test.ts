import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir } from '../../../test/fakes/fake-cli-harness.js';
import { isMusubiError } from '../../core/errors.js';
import type { AgentRunEvent } from '../agent-runner.js';
import { ScriptedRunner } from './scripted-runner.js';

describe('scripted agent', () => {
  let root: string;
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: root, cleanup } = await makeTempDir());
    dir = join(root, 'work');
    await mkdir(dir);
  });
  afterEach(() => cleanup());

  const runner = new ScriptedRunner({ env: fakeParentEnv(), graceMs: 200 });
  const run = (prompt: string, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    runner.run({
      prompt,
      cwd: dir,
      timeoutMs: extra.timeoutMs ?? 10_000,
      ...(extra.signal && { signal: extra.signal }),
    });

  it('writes, appends, reads and replies, ignoring prose lines', async () => {
    const result = await run(
      [
        'You are yadon-1. Do the task below.',
        'write notes/a.txt <<EOF',
        'line one',
        'reply not an instruction inside a here-doc',
        'EOF',
        'append notes/a.txt line two',
        'read notes/a.txt',
        'reply done',
      ].join('\n'),
    );
    expect(await readFile(join(dir, 'notes/a.txt'), 'utf8')).toBe(
      'line one\nreply not an instruction inside a here-doc\nline two\n',
    );
    expect(result).toMatchObject({
      backend: 'scripted',
      exitCode: 0,
      isError: false,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    expect(result.text).toBe('line one\nreply not an instruction inside a here-doc\nline two\ndone');
    expect(result.sessionId).toMatch(/^scripted-/);
  });

  it('runs argv commands without a shell and stops at a failing one', async () => {
    const result = await run(
      ['run node -e "console.log(1+1)"', 'run node -e "process.exit(3)"', 'write never.txt x'].join('\n'),
    );
    expect(result).toMatchObject({ exitCode: 3, isError: true });
    expect(result.text).toBe('2');
    expect(existsSync(join(dir, 'never.txt'))).toBe(false);
    const literal = await run('run node -e "console.log(process.argv[1])" $HOME;echo');
    expect(literal.text).toBe('$HOME;echo');
  });

  it('reports file and process steps as tool calls with their kind and result, and the usage last', async () => {
    const events: AgentRunEvent[] = [];
    const result = await runner.run({
      prompt: [
        'mkdir notes',
        'write notes/a.txt hello',
        'append notes/a.txt again',
        'read notes/a.txt',
        'run node -e "console.log(40+2)"',
        'reply done',
      ].join('\n'),
      cwd: dir,
      timeoutMs: 10_000,
      onEvent: (e) => events.push(e),
    });
    expect(result.isError).toBe(false);
    const transcript = events.filter((e) => e.type !== 'line' && e.type !== 'started');
    expect(transcript).toEqual([
      {
        type: 'tool',
        callId: 'step-1',
        name: 'mkdir',
        kind: 'edit',
        summary: 'notes',
        input: '{"path":"notes"}',
      },
      { type: 'tool_result', callId: 'step-1', isError: false, output: 'created notes/' },
      {
        type: 'tool',
        callId: 'step-2',
        name: 'write',
        kind: 'edit',
        summary: 'notes/a.txt',
        input: JSON.stringify({ path: 'notes/a.txt', content: 'hello\n' }),
      },
      { type: 'tool_result', callId: 'step-2', isError: false, output: 'wrote notes/a.txt (6 bytes)' },
      expect.objectContaining({ type: 'tool', callId: 'step-3', name: 'append', kind: 'edit' }),
      { type: 'tool_result', callId: 'step-3', isError: false, output: 'appended to notes/a.txt (6 bytes)' },
      expect.objectContaining({
        type: 'tool',
        callId: 'step-4',
        name: 'read',
        kind: 'read',
        summary: 'notes/a.txt',
      }),
      { type: 'tool_result', callId: 'step-4', isError: false, output: 'hello\nagain' },
      expect.objectContaining({
        type: 'tool',
        callId: 'step-5',
        name: 'run',
        kind: 'command',
        summary: "node -e 'console.log(40+2)'",
      }),
      { type: 'tool_result', callId: 'step-5', isError: false, output: '42' },
      { type: 'message', text: 'done' },
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } },
    ]);
  });

  it('reports a failing command and a refused step as failed tool results', async () => {
    const failing: AgentRunEvent[] = [];
    await runner.run({
      prompt: 'run node -e "process.exit(3)"',
      cwd: dir,
      timeoutMs: 10_000,
      onEvent: (e) => failing.push(e),
    });
    expect(failing.find((e) => e.type === 'tool_result')).toEqual({
      type: 'tool_result',
      callId: 'step-1',
      isError: true,
      output: 'ran node (exit 3)',
    });
    const missing: AgentRunEvent[] = [];
    await runner.run({
      prompt: 'read nope.txt',
      cwd: dir,
      timeoutMs: 10_000,
      onEvent: (e) => missing.push(e),
    });
    expect(missing.find((e) => e.type === 'tool_result')).toMatchObject({
      isError: true,
      output: expect.stringContaining('ENOENT'),
    });
  });

  it('goes on past a tried step that fails or leaves cwd, reporting it as a failed tool call (#34 item 6)', async () => {
    const events: AgentRunEvent[] = [];
    const result = await runner.run({
      prompt: [
        'try write ../outside.txt hi',
        'try read nope.txt',
        'try run node -e "process.exit(2)"',
        'try to keep it short',
        'reply could not write',
      ].join('\n'),
      cwd: dir,
      timeoutMs: 10_000,
      onEvent: (e) => events.push(e),
    });
    expect(result).toMatchObject({ exitCode: 0, isError: false, text: 'could not write' });
    expect(existsSync(join(root, 'outside.txt'))).toBe(false);
    const tools = events.filter((e) => e.type === 'tool' || e.type === 'tool_result');
    expect(tools.map((e) => (e.type === 'tool' ? `${e.name}:${e.kind}` : String(e.isError)))).toEqual([
      'write:edit',
      'true',
      'read:read',
      'true',
      'run:command',
      'true',
    ]);
    expect(tools[1]).toMatchObject({
      callId: 'step-1',
      output: expect.stringMatching(/^PATH_OUTSIDE_CWD: /),
    });
  });

  it('fails with the given reason', async () => {
    const result = await run('reply starting\nfail cannot do this\nreply never');
    expect(result).toMatchObject({ exitCode: 1, isError: true, text: 'starting\ncannot do this' });
  });

  it('summarises its actions when nothing was replied, and does nothing for prose only', async () => {
    expect((await run('mkdir out\nwrite out/x.txt hi')).text).toBe(
      'scripted: created out/; wrote out/x.txt (3 bytes)',
    );
    expect(await run('Please improve the code.')).toMatchObject({
      exitCode: 0,
      text: 'scripted: no instructions found; nothing done',
    });
  });

  it('times out and cancels a sleep', async () => {
    expect(await run('sleep 60000', { timeoutMs: 100 })).toMatchObject({
      timedOut: true,
      isError: true,
      exitCode: null,
    });
    const controller = new AbortController();
    const pending = run('sleep 60000', { signal: controller.signal });
    controller.abort();
    expect(await pending).toMatchObject({ canceled: true, isError: true });
  });

  it('refuses paths outside cwd by .., absolute path and symlink, before doing anything', async () => {
    await symlink(root, join(dir, 'escape'));
    await writeFile(join(root, 'secret.txt'), 'secret');
    for (const bad of [
      'write ../x.txt hi',
      `write ${join(root, 'x.txt')} hi`,
      'read escape/secret.txt',
      'write escape/new/x.txt hi',
      'mkdir a/../../b',
    ]) {
      const err: unknown = await run(`write first.txt ok\n${bad}`).catch((e: unknown) => e);
      expect(isMusubiError(err, 'PATH_OUTSIDE_CWD'), bad).toBe(true);
      expect(existsSync(join(dir, 'first.txt'))).toBe(false);
    }
    expect(existsSync(join(root, 'x.txt'))).toBe(false);
  });

  it('rejects malformed instructions with SCRIPT_INVALID and the line', async () => {
    for (const bad of ['write', 'write a.txt <<EOF\nno end', 'sleep soon', 'run "unterminated']) {
      const err: unknown = await run(`reply hi\n${bad}`).catch((e: unknown) => e);
      expect(isMusubiError(err, 'SCRIPT_INVALID'), bad).toBe(true);
      expect(String(err)).toContain('line 2');
    }
  });

  it('answers a yadon decomposition request with one implement subtask per bullet', async () => {
    const prompt = [
      'あなたはヤドラン (manager) です。yadoran.md を読んでください。',
      'Return JSON only: {"phases": [{"name": "implement", "subtasks": [{"instruction": "..."}]}], "strategy": "..."}',
      'Rules: at most 2 subtasks per phase.',
      '<task>',
      'Build the thing',
      '- write a.txt A',
      '- write b.txt B',
      '- write c.txt C',
      '</task>',
    ].join('\n');
    const result = await run(prompt);
    const reply: unknown = JSON.parse(result.text);
    expect(reply).toMatchObject({
      phases: [
        {
          name: 'implement',
          subtasks: [{ instruction: 'write a.txt A\nwrite c.txt C' }, { instruction: 'write b.txt B' }],
        },
        { name: 'docs', subtasks: [{ instruction: expect.stringContaining('Build the thing') }] },
        { name: 'review', subtasks: [{ instruction: expect.stringContaining('Build the thing') }] },
      ],
    });
    expect(existsSync(join(dir, 'a.txt'))).toBe(false);
  });

  it('answers a N.E.K.O. channel assessment and plugin selection by fixed rules', async () => {
    const channels = [
      'Channels:',
      '- shell: runs shell commands and tests in the project',
      '- webhook: posts to the deploy service',
      'Answer {"<id>": {"can_execute": true, "task_description": "", "reason": ""}}',
      'LATEST_USER_REQUEST: run the tests and fix failures',
      'user: run the tests and fix failures',
    ].join('\n');
    expect(JSON.parse((await run(channels)).text)).toEqual({
      shell: {
        can_execute: true,
        task_description: 'run the tests and fix failures',
        reason: "scripted: matched 'tests'",
      },
      webhook: { can_execute: false, task_description: '', reason: 'scripted: no match' },
    });
    const question = channels.replace(/LATEST_USER_REQUEST: .*/, 'LATEST_USER_REQUEST: what are tests?');
    expect(JSON.parse((await run(question)).text)).toMatchObject({
      shell: { can_execute: false },
      webhook: { can_execute: false },
    });

    const plugins = [
      '- notes: keeps notes | entries: [add: add a note args(text:string required=[text]); list: list notes]',
      'Return {"has_task": true, "can_execute": true, "plugin_id": "", "entry_id": "", "plugin_args": {}}',
      'LATEST_USER_REQUEST: add to my notes text="buy milk"',
    ].join('\n');
    expect(JSON.parse((await run(plugins)).text)).toMatchObject({
      has_task: true,
      can_execute: true,
      plugin_id: 'notes',
      entry_id: 'add',
      plugin_args: { text: 'buy milk' },
    });
  });
});
