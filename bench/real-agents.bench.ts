// Turn overhead on the real agent CLIs: one plain-reply turn through CliAgentRunner against musubi's local
// model endpoint, against a bare child_process.spawn of the same binary with the same argv, stdin and
// environment, interleaved in the same run. The CLIs come from the cache scripts/install-agent-clis.mjs
// fills; a CLI missing there is listed as skipped. Most of a turn is the CLI's own start-up and its
// requests to the endpoint, so the ratio shows what musubi adds around it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentBackend } from '../src/agents/agent-runner.js';
import { CliAgentRunner } from '../src/agents/cli/cli-agent-runner.js';
import { CLI_BACKENDS } from '../src/agents/cli/cli-backends.js';
import { CLI_WIRINGS } from '../src/agents/model-endpoint/cli-wirings.js';
import { createModelEndpoint } from '../src/agents/model-endpoint/create-model-endpoint.js';
import { ChildReaper } from '../src/agents/process/child-reaper.js';
import { buildChildEnv } from '../src/agents/process/child-env.js';
import { isolatedEnv, PINS, realCliPath, writeWiringFiles } from '../test/real-agents/real-cli.js';
import { percentile, printTable, writeResultsSection, type BenchRow } from './bench-kit.js';

type Cli = Exclude<AgentBackend, 'scripted'>;
const RUNS = Number(process.env['REAL_AGENT_BENCH_RUNS'] ?? '5');
const PROMPT = 'MUSUBI-MODEL: {"reply": "pong"}\nping';
const TIMEOUT_MS = 120_000;

function bareSpawn(
  file: string,
  args: readonly string[],
  o: { cwd: string; env: Record<string, string>; stdin?: string },
) {
  return new Promise<number | null>((resolve, reject) => {
    const child = spawn(file, [...args], { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.stdin ?? '');
  });
}

async function measure(cli: Cli, file: string, url: string, root: string): Promise<BenchRow[]> {
  const home = join(root, cli, 'home');
  const cwd = join(root, cli, 'work');
  const wiring = CLI_WIRINGS[cli]({ url, configDir: join(home, `.${cli}`) });
  await writeWiringFiles([...wiring.files, { path: join(cwd, '.keep'), content: '' }]);
  const source = { ...isolatedEnv(home), IS_SANDBOX: '1' };
  const backend = CLI_BACKENDS[cli];
  const runner = new CliAgentRunner({
    backend,
    env: source,
    extraEnv: wiring.env,
    command: file,
    reaper: new ChildReaper(),
    ...(wiring.model !== undefined && { model: wiring.model }),
  });
  const env = buildChildEnv({ source, allow: backend.authEnv, add: wiring.env });
  const samples = { runner: [] as number[], bare: [] as number[] };
  let failures = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    for (const impl of i % 2 === 0 ? (['runner', 'bare'] as const) : (['bare', 'runner'] as const)) {
      const scratchDir = await mkdtemp(join(tmpdir(), 'musubi-bench-turn-'));
      const t0 = performance.now();
      if (impl === 'runner') {
        const result = await runner.run({ prompt: PROMPT, cwd, timeoutMs: TIMEOUT_MS });
        if (result.isError) failures++;
      } else {
        const turn = {
          prompt: PROMPT,
          cwd,
          scratchDir,
          childEnv: env,
          isRoot: process.getuid?.() === 0,
          settings: {},
        };
        const invocation = backend.buildInvocation({
          ...turn,
          ...(wiring.model !== undefined && { model: wiring.model }),
        });
        if (
          (await bareSpawn(file, invocation.args, {
            cwd,
            env,
            ...(invocation.stdin !== undefined && { stdin: invocation.stdin }),
          })) !== 0
        )
          failures++;
      }
      const ms = performance.now() - t0;
      await rm(scratchDir, { recursive: true, force: true });
      if (i > 0) samples[impl].push(ms); // the first round warms the page cache and the CLI's own caches
    }
  }
  const total = (impl: 'runner' | 'bare') => samples[impl].reduce((a, b) => a + b, 0);
  const row = (impl: 'runner' | 'bare'): BenchRow => ({
    implementation: `${cli} ${PINS[cli].version}: ${impl === 'runner' ? 'CliAgentRunner.run' : 'bare spawn'}`,
    'p50 ms': percentile(samples[impl], 50),
    'max ms': Math.max(...samples[impl]),
    'overhead ms': impl === 'bare' ? 0 : percentile(samples.runner, 50) - percentile(samples.bare, 50),
    ratio: impl === 'bare' ? 1 : total('runner') / total('bare'),
    failed: failures,
  });
  return [row('bare'), row('runner')];
}

const root = mkdtempSync(join(tmpdir(), 'musubi-real-agent-bench-'));
const endpoint = createModelEndpoint();
try {
  const url = await endpoint.start();
  const rows: BenchRow[] = [];
  const skipped: string[] = [];
  for (const cli of Object.keys(CLI_BACKENDS) as Cli[]) {
    const file = realCliPath(cli);
    if (file === undefined) skipped.push(cli);
    else rows.push(...(await measure(cli, file, url, root)));
  }
  const table = printTable(
    `Real agent CLI turn overhead (${RUNS} plain-reply turns each against the local model endpoint)`,
    rows,
  );
  const note = skipped.length > 0 ? `\nSkipped (not in the CLI cache): ${skipped.join(', ')}.\n` : '';
  if (note !== '') console.log(note.trim());
  const heading = '## Real agent CLIs: turn overhead';
  const intro = [
    '`npx tsx bench/real-agents.bench.ts` — one plain-reply turn of each pinned real CLI against the local model',
    'endpoint, through `CliAgentRunner.run` and as a bare spawn of the same argv, stdin and environment, interleaved',
    "(a first warm-up round is not counted). `overhead ms` is the runner's p50 minus the bare p50.",
  ].join('\n');
  writeResultsSection(heading, `${heading}\n\n${intro}\n\n${table}${note}`);
} finally {
  await endpoint.close();
  rmSync(root, { recursive: true, force: true });
}
