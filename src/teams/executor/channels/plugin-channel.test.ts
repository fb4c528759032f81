import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../test/fakes/fake-clock.js';
import { ChildReaper } from '../../../agents/process/child-reaper.js';
import { pluginInfoSchema } from '../plugin-catalogue.js';
import { createPluginChannel, type LoadedPlugin } from './plugin-channel.js';
import { loadPluginFolder } from './plugin-folder.js';
import { deliveryOf, pluginStatus, toChannelResult } from './plugin-result.js';

const run = (overrides: Partial<{ signal: AbortSignal }> = {}) => ({
  signal: overrides.signal ?? new AbortController().signal,
  onProgress: () => undefined,
});
const task = (pluginId: string, entryId: string, args: Record<string, unknown> = {}) => ({
  id: 't1',
  instruction: 'x',
  sessionKey: 's',
  plugin: { pluginId, entryId, args },
});

describe('plugin results', () => {
  it('maps delivery modes', () => {
    expect(deliveryOf({ agent: { delivery: 'passive' } })).toBe('passive');
    expect(deliveryOf({ agent: { delivery: true } })).toBe('proactive');
    expect(deliveryOf({ agent: { delivery: false } })).toBe('silent');
    expect(deliveryOf({ agent: { delivery: 'loud' } })).toBe('proactive');
    expect(deliveryOf(undefined)).toBe('proactive');
  });

  it('maps terminal statuses', () => {
    expect(pluginStatus({ success: false })).toBe('failed');
    expect(pluginStatus({ success: true, data: { status: 'error' } })).toBe('failed');
    expect(pluginStatus({ success: true, data: { status: 'error', observation_only: true } })).toBe(
      'completed',
    );
    for (const data of [
      { needs_confirmation: true },
      { action: 'clarify' },
      { status: 'blocked' },
      { status: 'confirm_required' },
    ]) {
      expect(pluginStatus({ success: true, data })).toBe('blocked');
    }
    expect(pluginStatus({ success: true, data: { status: 'ok' } })).toBe('completed');
    expect(toChannelResult({ success: true, data: { deferred: true } }, 'p')).toMatchObject({
      deferred: true,
      source: { kind: 'plugin', name: 'p' },
    });
  });
});

describe('plugin channel', () => {
  const plugin = (handler: LoadedPlugin['handler']): LoadedPlugin => ({
    info: pluginInfoSchema.parse({
      id: 'notes',
      entries: [
        {
          id: 'Add',
          args_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
        { id: 'list' },
        { id: 'LIST' },
      ],
    }),
    handler,
  });

  it('validates arguments against the entry schema and resolves entry ids case-insensitively when unique', async () => {
    const calls: string[] = [];
    const channel = createPluginChannel({
      id: 'plugins',
      clock: new FakeClock(),
      plugins: [plugin((call) => (calls.push(call.entryId), Promise.resolve({ success: true })))],
    });
    expect(await channel.run(task('notes', 'add', { text: 1 }), run())).toMatchObject({
      success: false,
      error: expect.stringMatching(/^invalid args: text: /),
    });
    expect(await channel.run(task('notes', 'add', { text: 'a' }), run())).toMatchObject({ success: true });
    expect(await channel.run(task('notes', 'List'), run())).toMatchObject({
      error: "entry_id 'List' not found in plugin 'notes'",
    });
    expect(await channel.run(task('other', 'run'), run())).toMatchObject({
      error: "plugin 'other' not found",
    });
    expect(calls).toEqual(['Add']);
  });

  it('times an entry out through its signal and ends at once when cancelled', async () => {
    const clock = new FakeClock();
    const hang: LoadedPlugin['handler'] = (call) =>
      new Promise((_, reject) => call.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    const channel = createPluginChannel({
      id: 'plugins',
      clock,
      plugins: [plugin(hang)],
      defaultTimeoutMs: 1000,
    });
    const running = channel.run(task('notes', 'list'), run());
    clock.advance(1000);
    expect(await running).toMatchObject({ success: false, error: 'Timed out' });
    const controller = new AbortController();
    const cancelled = channel.run(task('notes', 'list'), run({ signal: controller.signal }));
    controller.abort();
    expect(await cancelled).toMatchObject({ status: 'cancelled' });
  });
});

describe('plugin folder', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'musubi-plugins-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function addPlugin(
    name: string,
    manifest: unknown,
    files: Record<string, string> = {},
  ): Promise<void> {
    await mkdir(join(dir, name));
    await writeFile(
      join(dir, name, 'plugin.json'),
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
    );
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, name, file), text);
  }

  it('loads valid plugins, skips invalid ones with a reason, and runs a command handler', async () => {
    const script = [
      "let input = '';",
      "process.stdin.on('data', (c) => (input += c));",
      "process.stdin.on('end', () => {",
      '  const req = JSON.parse(input);',
      "  console.log(JSON.stringify({ type: 'progress', stage: 'echo', step_total: 1 }));",
      "  console.log(JSON.stringify({ success: true, data: { summary: 'echo ' + req.args.text + ' ' + process.env.MUSUBI_TASK_ID } }));",
      '});',
    ].join('\n');
    await addPlugin(
      'echo',
      {
        id: 'echo',
        description: 'echoes',
        entries: [{ id: 'say' }],
        handler: { kind: 'command', argv: [process.execPath, 'echo.js'] },
      },
      { 'echo.js': script },
    );
    await addPlugin('wrong', { id: 'other', handler: { kind: 'http', url: 'http://127.0.0.1:1/x' } });
    await addPlugin('broken', '{nope');
    await addPlugin('escape', { id: 'escape', handler: { kind: 'command', argv: ['../echo/echo.js'] } });
    await mkdir(join(dir, '.hidden'));
    const loaded = await loadPluginFolder(dir, { env: process.env, reaper: new ChildReaper() });
    expect(loaded.plugins.map((p) => p.info.id)).toEqual(['echo', 'escape']);
    expect(loaded.problems).toEqual([
      'broken: plugin.json is not JSON',
      "wrong: id 'other' does not match the folder name",
    ]);
    const channel = createPluginChannel({ id: 'plugins', clock: new FakeClock(), plugins: loaded.plugins });
    const progress: unknown[] = [];
    const result = await channel.run(task('echo', 'say', { text: 'hi' }), {
      signal: new AbortController().signal,
      onProgress: (p) => progress.push(p),
    });
    expect(result, JSON.stringify(result)).toMatchObject({ success: true, summary: 'echo hi t1' });
    expect(progress).toEqual([{ stage: 'echo', stepTotal: 1 }]);
    expect(await channel.run(task('escape', 'run'), run())).toMatchObject({
      success: false,
      error: "plugin command '../echo/echo.js' not found",
    });
  });

  it('loads nothing from a missing folder', async () => {
    expect(
      await loadPluginFolder(join(dir, 'none'), { env: process.env, reaper: new ChildReaper() }),
    ).toEqual({
      plugins: [],
      problems: [`plugin folder ${join(dir, 'none')} not found`],
    });
  });
});
