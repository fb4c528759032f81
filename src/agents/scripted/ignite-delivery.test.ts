import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planIgniteTurn } from './ignite-delivery.js';
import { orgTurn, tasksOf } from './ignite-org-rules.js';

const prompt = (path: string): string => `新しいメッセージが来ました。${path} を読んで処理してください。`;

describe('scripted agent: IGNITE delivery prompt', () => {
  let cwd = '';
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'musubi-scripted-ignite-'));
    await mkdir(join(cwd, '.ignite/queue/coordinator/processed'), { recursive: true });
    await mkdir(join(cwd, '.ignite/queue/ignitian_1'), { recursive: true });
    await mkdir(join(cwd, '.ignite/queue/ignitian_2'), { recursive: true });
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  it('plans one task_assignment per task, spread over the workers, sent with the named send tool', async () => {
    const file = join(cwd, '.ignite/queue/coordinator/processed/task_list_1795975394355402.mime');
    await writeFile(
      file,
      'From: leader\nTo: coordinator\nX-IGNITE-Type: task_list\n\ngoal: |\n  g\ntasks: |\n  - write a.txt A\n  - write b.txt B\n  - write c.txt C\n',
    );
    const plan = await planIgniteTurn({
      prompt: prompt(file),
      cwd,
      timeoutMs: 1000,
      systemPrompt: 'send tool: /x/send_message.sh',
    });
    const sends = plan?.script.flatMap((s) => (s.op === 'run' ? [s.argv.slice(0, 4)] : [])) ?? [];
    expect(sends).toEqual([
      ['/x/send_message.sh', 'task_assignment', 'coordinator', 'ignitian_1'],
      ['/x/send_message.sh', 'task_assignment', 'coordinator', 'ignitian_2'],
      ['/x/send_message.sh', 'task_assignment', 'coordinator', 'ignitian_1'],
      ['/x/send_message.sh', 'progress_update', 'coordinator', 'leader'],
    ]);
  });

  it('ignores other prompts and refuses a message file outside the working directory', async () => {
    expect(await planIgniteTurn({ prompt: 'write a.txt A', cwd, timeoutMs: 1000 })).toBeUndefined();
    await expect(
      planIgniteTurn({ prompt: prompt('/etc/hostname'), cwd, timeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 'PATH_OUTSIDE_CWD' });
  });

  it('answers unknown requests with the matching response to the sender', () => {
    const turn = orgTurn(
      { type: 'design_review_request', from: 'strategist', self: 'architect', field: () => '' },
      2,
    );
    expect(turn.replies).toEqual([
      { type: 'design_review_response', to: 'strategist', body: 'status: "ok"' },
    ]);
    expect(tasksOf('Do it:\n- a\n* b\n1. c')).toEqual(['a', 'b', 'c']);
    expect(tasksOf('just one thing')).toEqual(['just one thing']);
  });
});
