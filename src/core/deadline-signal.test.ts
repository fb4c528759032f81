import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { runNode, TSX_LOADER } from '../../test/fixtures/run-cli.js';
import { createDeadlineSignal } from './deadline-signal.js';

describe('createDeadlineSignal', () => {
  it('aborts with a TimeoutError at the deadline and not before', () => {
    const clock = new FakeClock();
    const { signal } = createDeadlineSignal({ signals: [], timeoutMs: 100, clock });
    clock.advance(99);
    expect(signal.aborted).toBe(false);
    clock.advance(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
    expect((signal.reason as DOMException).message).toBe('The operation was aborted due to timeout');
  });

  it('aborts with the reason of the first source to abort and cancels its timer', () => {
    const clock = new FakeClock();
    const first = new AbortController();
    const second = new AbortController();
    const { signal } = createDeadlineSignal({
      signals: [first.signal, second.signal],
      timeoutMs: 100,
      clock,
    });
    const reason = new Error('cancelled');
    second.abort(reason);
    first.abort(new Error('later'));
    expect(signal.reason).toBe(reason);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is aborted at once, without a timer, when a source is already aborted', () => {
    const clock = new FakeClock();
    const source = new AbortController();
    source.abort('gone');
    const deadline = createDeadlineSignal({ signals: [source.signal], timeoutMs: 100, clock });
    expect(deadline.signal.reason).toBe('gone');
    expect(clock.pendingTimers()).toBe(0);
    deadline.dispose();
  });

  it('leaves nothing behind once disposed: no timer, no listener, the signal unaborted', () => {
    const clock = new FakeClock();
    const source = new AbortController();
    const deadline = createDeadlineSignal({ signals: [source.signal], timeoutMs: 100, clock });
    deadline.dispose();
    deadline.dispose();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1_000);
    source.abort();
    expect(deadline.signal.aborted).toBe(false);
  });

  it('is disposed at the end of a using block', () => {
    const clock = new FakeClock();
    {
      using deadline = createDeadlineSignal({ signals: [], timeoutMs: 100, clock });
      expect(deadline.signal.aborted).toBe(false);
      expect(clock.pendingTimers()).toBe(1);
    }
    expect(clock.pendingTimers()).toBe(0);
  });
});

// Node 20 holds the sources of AbortSignal.any weakly, so a timeout source nothing else references is
// collected and never fires (checked by hand on 20.20.2: \`AbortSignal.any([parent, AbortSignal.timeout(50)])\`
// in this probe prints "never"). A child with --expose-gc forces the collection deterministically.
const PROBE = `
const [deadlineUrl, clockUrl] = process.argv.slice(1);
const { createDeadlineSignal } = await import(deadlineUrl);
const { createSystemClock } = await import(clockUrl);
const parent = new AbortController();
const { signal } = createDeadlineSignal({ signals: [parent.signal], timeoutMs: 50, clock: createSystemClock() });
let giveUp;
const fired = new Promise((resolve) => {
  signal.addEventListener('abort', () => resolve(signal.reason.name));
  giveUp = setTimeout(() => resolve('never'), 1000);
});
for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((r) => setImmediate(r)); }
console.log(await fired);
clearTimeout(giveUp);
`;

async function probeAfterGc(): Promise<string> {
  const url = (file: string): string => new URL(file, import.meta.url).href;
  const run = await runNode(
    [
      '--expose-gc',
      '--import',
      TSX_LOADER,
      '--input-type=module',
      '-e',
      PROBE,
      url('./deadline-signal.ts'),
      url('./clock.ts'),
    ],
    { cwd: process.cwd() },
  );
  expect(run.stderr).toBe('');
  return run.stdout.trim();
}

describe('createDeadlineSignal after garbage collection', () => {
  it('still fires when only the signal is referenced and a GC ran', async () => {
    expect(await probeAfterGc()).toBe('TimeoutError');
  });
});
