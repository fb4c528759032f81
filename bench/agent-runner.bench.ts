// Runner overhead: one agent turn through CliAgentRunner (env allowlist, PATH lookup, own process group,
// capped capture, JSON parsing, stop-ladder check after exit) against a bare child_process.spawn of the same
// binary with the same argv and stdin, in the same run. Workloads: the fake claude (a Node script that
// answers at once) and /bin/true (no startup cost, so the runner's own cost shows most). Target ratio <= 1.2.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { claudeBackend } from '../src/agents/claude/claude-backend.js';
import { CliAgentRunner } from '../src/agents/cli/cli-agent-runner.js';
import type { CliBackend } from '../src/agents/cli/cli-backend.js';
import { ChildReaper } from '../src/agents/process/child-reaper.js';
import { FAKE_BIN_DIR } from '../test/fakes/fake-cli-harness.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const RUNS = Number(process.env['AGENT_BENCH_RUNS'] ?? '200');
const dir = mkdtempSync(join(tmpdir(), 'musubi-agent-bench-'));
const env = { PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`, HOME: process.env['HOME'] };
const trueBackend: CliBackend = { ...claudeBackend, command: 'true' };

function bareSpawn(file: string, args: readonly string[], stdin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve());
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

async function measure(workload: string, backend: CliBackend, file: string): Promise<BenchRow[]> {
  const runner = new CliAgentRunner({ backend, env, reaper: new ChildReaper() });
  const args = backend.buildInvocation({
    prompt: 'hi',
    cwd: dir,
    scratchDir: dir,
    childEnv: {},
    isRoot: false,
    settings: {},
  }).args;
  const samples = { runner: [] as number[], bare: [] as number[] };
  const totals = { runner: 0, bare: 0 };
  const rss = { runner: 0, bare: 0 };
  for (let i = 0; i < 10; i++) {
    await runner.run({ prompt: 'hi', cwd: dir, timeoutMs: 10_000 });
    await bareSpawn(file, args, 'hi');
  }
  // Interleaved so drift (thermal, page cache) hits both sides alike.
  for (let i = 0; i < RUNS; i++) {
    for (const impl of i % 2 === 0 ? (['runner', 'bare'] as const) : (['bare', 'runner'] as const)) {
      const peak = trackPeakRss();
      const t0 = performance.now();
      if (impl === 'runner') await runner.run({ prompt: 'hi', cwd: dir, timeoutMs: 10_000 });
      else await bareSpawn(file, args, 'hi');
      const ms = performance.now() - t0;
      rss[impl] = Math.max(rss[impl], peak.stop());
      samples[impl].push(ms);
      totals[impl] += ms;
    }
  }
  const row = (impl: 'runner' | 'bare'): BenchRow => ({
    implementation: `${workload}: ${impl === 'runner' ? 'CliAgentRunner.run' : 'bare child_process.spawn'}`,
    'runs/s': (RUNS / totals[impl]) * 1000,
    'p50 ms': percentile(samples[impl], 50),
    'p99 ms': percentile(samples[impl], 99),
    'peak RSS MiB': rss[impl] / 1024 / 1024,
    ratio: impl === 'bare' ? 1 : totals.runner / totals.bare,
  });
  return [row('bare'), row('runner')];
}

try {
  const rows = [
    ...(await measure('fake claude', claudeBackend, join(FAKE_BIN_DIR, 'claude'))),
    ...(await measure('/bin/true', trueBackend, '/bin/true')),
  ];
  printTable(
    `Agent runner overhead (${RUNS} sequential turns each; ratio = runner time / bare spawn time)`,
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
