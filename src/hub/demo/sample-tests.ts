import type { ChildReaper } from '../../agents/process/child-reaper.js';
import { buildChildEnv } from '../../agents/process/child-env.js';
import { runProcess } from '../../agents/process/run-process.js';

/** Test counts as `node --test --test-reporter=tap` prints them in its closing comments. */
export interface TestCounts {
  readonly tests: number;
  readonly pass: number;
  readonly fail: number;
}

/** One run of the sample project's test suite. */
export interface SampleTestRun {
  /** Undefined when the output had no TAP totals (the runner could not start, or was stopped). */
  readonly counts: TestCounts | undefined;
  readonly exitCode: number | null;
  readonly isPassed: boolean;
  readonly durationMs: number;
}

/** Arguments of the suite run; also what the tester agent is told to run. */
export const SAMPLE_TEST_ARGV = ['--test', '--test-reporter=tap'] as const;

/**
 * Reads `# tests N`, `# pass N`, `# fail N` from TAP output (the last occurrence wins, so nested
 * summaries never shadow the final one). Undefined unless all three are present.
 */
export function parseTapCounts(output: string): TestCounts | undefined {
  const last = (name: string): number | undefined => {
    const all = [...output.matchAll(new RegExp(`^# ${name} (\\d+)$`, 'gm'))];
    const value = all.at(-1)?.[1];
    return value === undefined ? undefined : Number(value);
  };
  const tests = last('tests');
  const pass = last('pass');
  const fail = last('fail');
  return tests === undefined || pass === undefined || fail === undefined ? undefined : { tests, pass, fail };
}

/**
 * Runs the sample's own tests (`node --test` with the TAP reporter) in `projectDir` with the node binary
 * `nodePath`, an allowlisted environment and a deadline. Passed means exit code 0 and no failing test.
 * Rejects only when node cannot start (AGENT_NOT_FOUND / AGENT_FAILED from the process layer).
 */
export async function runSampleTests(options: {
  readonly projectDir: string;
  readonly nodePath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}): Promise<SampleTestRun> {
  const result = await runProcess({
    file: options.nodePath,
    displayName: 'node --test',
    args: SAMPLE_TEST_ARGV,
    cwd: options.projectDir,
    env: buildChildEnv({ source: options.env, add: { NO_COLOR: '1' } }),
    timeoutMs: options.timeoutMs,
    reaper: options.reaper,
    ...(options.signal !== undefined && { signal: options.signal }),
  });
  const counts = parseTapCounts(result.stdout);
  return {
    counts,
    exitCode: result.exitCode,
    isPassed: result.exitCode === 0 && counts !== undefined && counts.fail === 0,
    durationMs: result.durationMs,
  };
}
