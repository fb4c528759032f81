import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConversationView } from './conversation.js';
import { DEFAULT_SCRIPT, type EndpointScript } from './model-behaviour.js';
import { AttemptCounter, planResponse } from './model-planner.js';

const WRITE_TOOL = {
  name: 'Write',
  kind: 'function' as const,
  schema: { type: 'object', properties: { file_path: {}, content: {} } },
};
const READ_TOOL = {
  name: 'Read',
  kind: 'function' as const,
  schema: { type: 'object', properties: { file_path: {}, limit: {} } },
};
const BASH_TOOL = {
  name: 'Bash',
  kind: 'function' as const,
  schema: { type: 'object', properties: { command: {} } },
};

function view(prompt: string, more: Partial<ConversationView> = {}): ConversationView {
  return {
    model: 'm',
    stream: true,
    tools: [WRITE_TOOL, BASH_TOOL],
    systemText: 'Working directory: /work/repo',
    userTexts: [prompt],
    toolResultsSinceUser: 0,
    wantsJson: false,
    inputChars: 400,
    ...more,
  };
}

const plan = (
  v: ConversationView,
  script: EndpointScript = DEFAULT_SCRIPT,
  attempts = new AttemptCounter(),
) => planResponse(v, script, attempts);

describe('model planner', () => {
  it('turns the scripted instructions of a prompt into one tool call per step, then the reply', () => {
    const prompt = 'Implement it.\nwrite src/a.txt hello\nrun npm test\nreply all done';
    const first = plan(view(prompt)).action;
    expect(first).toMatchObject({
      kind: 'tool',
      name: 'Write',
      input: { file_path: '/work/repo/src/a.txt', content: 'hello\n' },
    });
    expect(plan(view(prompt, { toolResultsSinceUser: 1 })).action).toMatchObject({
      kind: 'tool',
      name: 'Bash',
      input: { command: 'npm test' },
    });
    expect(plan(view(prompt, { toolResultsSinceUser: 2 })).action).toEqual({
      kind: 'text',
      text: 'all done',
    });
  });

  it('answers a yadon decomposition request with its JSON and plain prose with a short reply', () => {
    const decomposition = plan(
      view('<task>\n- add a\n- add b\n</task>\nReturn "phases" with subtasks'),
    ).action;
    expect(decomposition.kind).toBe('text');
    expect(JSON.parse(decomposition.kind === 'text' ? decomposition.text : '')).toHaveProperty('phases');
    expect(plan(view('How are you?')).action).toEqual({ kind: 'text', text: 'Done.' });
  });

  it('fails only the first attempt of a flaky or cut request', () => {
    const attempts = new AttemptCounter();
    const flaky = view('MUSUBI-MODEL: {"flaky": {"then": {"reply": "ok now"}}}');
    expect(plan(flaky, DEFAULT_SCRIPT, attempts).action).toMatchObject({ kind: 'error', status: 503 });
    expect(plan(flaky, DEFAULT_SCRIPT, attempts).action).toEqual({ kind: 'text', text: 'ok now' });
    const cut = view('MUSUBI-MODEL: {"cut": {"then": {"reply": "whole"}}}');
    expect(plan(cut, DEFAULT_SCRIPT, attempts)).toMatchObject({ isCut: true, action: { text: 'whole' } });
    expect(plan(cut, DEFAULT_SCRIPT, attempts).isCut).toBe(false);
  });

  it('answers side requests without tools plainly even when the turn is scripted to fail', () => {
    const side = view('MUSUBI-MODEL: {"error": {"status": 500, "message": "boom"}}', { tools: [] });
    expect(plan(side).action).toEqual({ kind: 'text', text: 'ok' });
    expect(plan({ ...side, wantsJson: true }).action).toEqual({ kind: 'text', text: '{}' });
    expect(plan(view('MUSUBI-MODEL: {"error": {"status": 500, "message": "boom"}}')).action).toEqual({
      kind: 'error',
      status: 500,
      message: 'boom',
    });
  });

  it('reports usage from the sizes of request and answer', () => {
    const planned = plan(view('MUSUBI-MODEL: {"reply": "12345678"}', { inputChars: 41 }));
    expect(planned.usage).toEqual({ inputTokens: 11, outputTokens: 2 });
  });

  it('says so in the reply when the CLI offers no tool that can write', () => {
    const action = plan(view('write a.txt x', { tools: [{ name: 'Read', kind: 'function' }] })).action;
    expect(action).toEqual({
      kind: 'text',
      text: 'musubi model endpoint: the CLI offered no tool that writes a.txt',
    });
  });

  describe('an edit of an existing file', () => {
    const repo = mkdtempSync(join(tmpdir(), 'musubi-planner-'));
    writeFileSync(join(repo, 'old.txt'), 'old\n');
    afterAll(() => rmSync(repo, { recursive: true, force: true }));
    const claudeView = (prompt: string, made: { name: string; input: unknown }[]) =>
      view(prompt, {
        tools: [READ_TOOL, WRITE_TOOL, BASH_TOOL],
        systemText: `Working directory: ${repo}`,
        toolResultsSinceUser: made.length,
        toolCallsSinceUser: made,
      });
    const read = { name: 'Read', input: { file_path: join(repo, 'old.txt') } };
    const writeOld = { name: 'Write', input: { file_path: join(repo, 'old.txt'), content: 'edited\n' } };
    const writeNew = { name: 'Write', input: { file_path: join(repo, 'new.txt'), content: 'new\n' } };

    it('reads the file first, then writes it, then replies (claude Write needs a read)', () => {
      const prompt = 'MUSUBI-MODEL: {"write": {"path": "old.txt", "content": "edited\\n", "then": "ok"}}';
      expect(plan(claudeView(prompt, [])).action).toMatchObject({ kind: 'tool', ...read });
      expect(plan(claudeView(prompt, [read])).action).toMatchObject({ kind: 'tool', ...writeOld });
      expect(plan(claudeView(prompt, [read, writeOld])).action).toEqual({ kind: 'text', text: 'ok' });
    });

    it('writes a new file at once and reads only the existing one in a scripted turn', () => {
      const prompt = 'write new.txt new\nwrite old.txt edited\nreply both';
      expect(plan(claudeView(prompt, [])).action).toMatchObject({ kind: 'tool', ...writeNew });
      // new.txt is not on disk: the planner goes by the calls made, not by what the write left behind.
      expect(plan(claudeView(prompt, [writeNew])).action).toMatchObject({ kind: 'tool', ...read });
      expect(plan(claudeView(prompt, [writeNew, read])).action).toMatchObject({ kind: 'tool', ...writeOld });
      expect(plan(claudeView(prompt, [writeNew, read, writeOld])).action).toEqual({
        kind: 'text',
        text: 'both',
      });
    });

    it('does not read when the file was written without a read, or the CLI needs none', () => {
      writeFileSync(join(repo, 'new.txt'), 'new\n');
      const prompt = 'write new.txt new\nreply done';
      // Written in this turn (the file exists now): the step is made, nothing is read afterwards.
      expect(plan(claudeView(prompt, [writeNew])).action).toEqual({ kind: 'text', text: 'done' });
      // A CLI without a read rule (no Read tool offered) overwrites at once.
      const noRead = view('write old.txt edited', { systemText: `Working directory: ${repo}` });
      expect(plan(noRead).action).toMatchObject({ kind: 'tool', ...writeOld });
      // A dialect that reports no calls: steps are counted by tool results, as before.
      const counted = view('write old.txt edited', {
        tools: [READ_TOOL, WRITE_TOOL],
        systemText: `Working directory: ${repo}`,
      });
      expect(plan(counted).action).toMatchObject({ kind: 'tool', ...writeOld });
    });
  });
});
