import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChildReaper } from '../../../agents/process/child-reaper.js';
import { createShellChannel } from './shell-channel.js';

describe('shell channel', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'musubi-shell-'));
    await mkdir(join(root, 'work'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const channel = (argv: string[], options: { cwd?: string; timeoutMs?: number } = {}) =>
    createShellChannel({
      id: 'shell',
      description: 'runs commands',
      argv,
      cwd: options.cwd ?? join(root, 'work'),
      root,
      env: { PATH: process.env['PATH'], SECRET_TOKEN: 'x' },
      reaper: new ChildReaper(),
      graceMs: 200,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    });
  const run = () => ({ signal: new AbortController().signal, onProgress: () => undefined });
  const task = { id: 'task-1', instruction: 'list files', sessionKey: 's' };

  it('runs argv in the cwd with the instruction on stdin and the task in the environment', async () => {
    const script =
      "let s='';process.stdin.on('data',(c)=>(s+=c));process.stdin.on('end',()=>console.log([s,process.env.MUSUBI_TASK_ID,process.env.MUSUBI_TASK_INSTRUCTION,process.env.SECRET_TOKEN??'none',process.cwd()].join('|')))";
    const shell = channel([process.execPath, '-e', script]);
    expect(await shell.isAvailable()).toEqual({ ready: true, reasons: [] });
    const result = await shell.run(task, run());
    expect(result).toMatchObject({ success: true });
    expect(result.summary).toMatch(/^list files\|task-1\|list files\|none\|.*work$/);
  });

  it('fails on a non-zero exit and on a timeout', async () => {
    expect(await channel([process.execPath, '-e', 'process.exit(3)']).run(task, run())).toMatchObject({
      success: false,
      status: 'failed',
      error: 'exit 3',
    });
    expect(
      await channel([process.execPath, '-e', 'setTimeout(() => {}, 60000)'], { timeoutMs: 100 }).run(
        task,
        run(),
      ),
    ).toMatchObject({
      success: false,
      error: 'Timed out',
    });
  });

  it('is not ready outside the work directory or without its command', async () => {
    expect((await channel([process.execPath], { cwd: tmpdir() }).isAvailable()).ready).toBe(false);
    expect(await channel(['no-such-command-xyz']).isAvailable()).toEqual({
      ready: false,
      reasons: ["command 'no-such-command-xyz' not found"],
    });
    expect(await channel(['no-such-command-xyz']).run(task, run())).toMatchObject({ success: false });
  });
});
