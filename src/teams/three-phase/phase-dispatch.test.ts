import { describe, expect, it } from 'vitest';
import { invalidSubtaskEntry } from '../../gateways/yadon/socket-subtask-dispatcher.js';
import {
  dispatchPhase,
  type DispatchOutcome,
  type Subtask,
  type SubtaskDispatcher,
} from './phase-dispatch.js';

type Entry = Readonly<Record<string, unknown>>;

interface Call {
  readonly worker: number;
  readonly subtask: Subtask;
}

async function collected(phase: Promise<Entry[] | 'canceled'>): Promise<Entry[]> {
  const entries = await phase;
  if (entries === 'canceled') throw new Error('phase canceled');
  return entries;
}

/** A dispatcher whose answers the test releases by hand, recording the order of calls. */
function manualDispatcher(unreachable: ReadonlySet<number> = new Set()) {
  const calls: Call[] = [];
  const pending = new Map<string, (o: DispatchOutcome<Entry>) => void>();
  const dispatcher: SubtaskDispatcher<Entry> = {
    invalidSubtask: invalidSubtaskEntry,
    dispatch: ({ worker, subtask }) => {
      calls.push({ worker, subtask });
      if (unreachable.has(worker)) {
        return Promise.resolve({
          entry: { from: `yadon-${worker}`, status: 'error', id: subtask.id },
          isConnectionFailure: true,
        });
      }
      return new Promise((resolve) => pending.set(subtask.id, resolve));
    },
  };
  const finish = (id: string, worker: number): void => {
    pending.get(id)?.({
      entry: { id, from: `yadon-${worker}`, status: 'success' },
      isConnectionFailure: false,
    });
    pending.delete(id);
  };
  return { dispatcher, calls, finish, pending };
}

const flush = () => new Promise((r) => setImmediate(r));
const subtasks = (k: number) => Array.from({ length: k }, (_, i) => ({ instruction: `s${i + 1}` }));

describe('phase dispatch', () => {
  it('runs 6 subtasks on 4 workers: 5 and 6 go to the first workers to finish', async () => {
    const m = manualDispatcher();
    const ac = new AbortController();
    const done = dispatchPhase({
      dispatcher: m.dispatcher,
      jobId: 'job',
      phase: { name: 'implement', subtasks: subtasks(6) },
      workerCount: 4,
      projectDir: '/p',
      signal: ac.signal,
    });
    await flush();
    expect(m.calls.map((c) => [c.worker, c.subtask.id])).toEqual([
      [1, 'job-implement-sub1'],
      [2, 'job-implement-sub2'],
      [3, 'job-implement-sub3'],
      [4, 'job-implement-sub4'],
    ]);
    m.finish('job-implement-sub3', 3);
    await flush();
    m.finish('job-implement-sub1', 1);
    await flush();
    expect(m.calls.slice(4).map((c) => [c.worker, c.subtask.id])).toEqual([
      [3, 'job-implement-sub5'],
      [1, 'job-implement-sub6'],
    ]);
    for (const [id, worker] of [
      ['job-implement-sub2', 2],
      ['job-implement-sub4', 4],
      ['job-implement-sub6', 1],
      ['job-implement-sub5', 3],
    ] as const) {
      m.finish(id, worker);
      await flush();
    }
    const entries = await collected(done);
    expect(entries.map((e) => e['id'])).toEqual([1, 2, 3, 4, 5, 6].map((j) => `job-implement-sub${j}`));
    expect(m.calls[4]?.subtask).toEqual({ id: 'job-implement-sub5', instruction: 's5', projectDir: '/p' });
  });

  it('gives an unreachable worker no more subtasks and sends leftovers round-robin when none is left', async () => {
    const m = manualDispatcher(new Set([1, 2]));
    const entries = await collected(
      dispatchPhase({
        dispatcher: m.dispatcher,
        jobId: 'j',
        phase: { name: 'p', subtasks: subtasks(4) },
        workerCount: 2,
        projectDir: '/p',
        signal: new AbortController().signal,
      }),
    );
    expect(m.calls.map((c) => [c.worker, c.subtask.id])).toEqual([
      [1, 'j-p-sub1'],
      [2, 'j-p-sub2'],
      [1, 'j-p-sub3'],
      [2, 'j-p-sub4'],
    ]);
    expect(entries).toHaveLength(4);
  });

  it("reports a subtask without a string instruction as id unknown, output 'instruction', and sends nothing", async () => {
    const m = manualDispatcher();
    const entries = await collected(
      dispatchPhase({
        dispatcher: m.dispatcher,
        jobId: 'j',
        phase: { name: 'p', subtasks: ['x', { instruction: 5 }] },
        workerCount: 4,
        projectDir: '/p',
        signal: new AbortController().signal,
      }),
    );
    expect(m.calls).toEqual([]);
    expect(entries).toEqual([
      {
        type: 'result',
        id: 'unknown',
        from: 'yadon-1',
        status: 'error',
        payload: { output: "'instruction'", summary: '実行エラー' },
      },
      {
        type: 'result',
        id: 'unknown',
        from: 'yadon-2',
        status: 'error',
        payload: { output: "'instruction'", summary: '実行エラー' },
      },
    ]);
  });
});
