import { spawn } from 'node:child_process';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../../agents/process/process-group.js';
import { MusubiError } from '../../core/errors.js';
import { agentIndex } from '../../gateways/ignite/agent-names.js';
import type { IgnitePaths } from '../../gateways/ignite/ignite-paths.js';
import { parseMime } from '../../gateways/ignite/mime/mime-parse.js';
import { orgAgents } from '../../teams/org/org-roles.js';
import type { CliContext } from '../cli-context.js';
import { turnFailureReason } from '../../agents/failure-reason.js';
import { deliveredCounts, monitorStoreUrl } from './monitor-store.js';

/** The pid of the running monitor of a runtime dir, or null (from its lock file, checked alive). */
export async function monitorPid(paths: IgnitePaths): Promise<number | null> {
  const pid = Number((await readFile(paths.stateFile('queue_monitor.lock'), 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : null;
}

/**
 * Queue counts of one agent: pending and in-flight ones from the files (reading processed/ on demand is
 * fine here), delivered from the bus's event log when it can be read (absent otherwise).
 */
export interface QueueSnapshot {
  readonly name: string;
  readonly pending: number;
  readonly processing: number;
  readonly retrying: number;
  readonly delivered?: number;
}

const isMessage = (n: string): boolean => !n.startsWith('.') && (n.endsWith('.mime') || n.endsWith('.yaml'));

/** Counts every agent queue of a runtime dir; `delivered` (turns per agent) is added when known. */
export async function snapshotQueues(
  paths: IgnitePaths,
  delivered: ReadonlyMap<string, number> | null,
): Promise<QueueSnapshot[]> {
  const dirs = (await readdir(paths.queue, { withFileTypes: true }).catch(() => [])).filter(
    (d) => d.isDirectory() && d.name !== 'dead_letter',
  );
  const out: QueueSnapshot[] = [];
  for (const d of dirs.sort(
    (a, b) => (agentIndex(a.name) ?? 99) - (agentIndex(b.name) ?? 99) || a.name.localeCompare(b.name),
  )) {
    const pending = (await readdir(join(paths.queue, d.name)).catch(() => [])).filter(isMessage).length;
    const counts = { processing: 0, retrying: 0 };
    const processed = join(paths.queue, d.name, 'processed');
    for (const n of (await readdir(processed).catch(() => [])).filter(isMessage)) {
      const status =
        parseMime(await readFile(join(processed, n), 'utf8').catch(() => '')).headers.get(
          'X-IGNITE-Status',
        ) ?? '';
      if (status === 'retrying') counts.retrying++;
      // A delivered file the agent has not deleted yet is counted by the event log, not here.
      else if (status !== 'delivered' && status !== 'completed') counts.processing++;
    }
    out.push({
      name: d.name,
      pending,
      ...counts,
      ...(delivered !== null && { delivered: delivered.get(d.name) ?? 0 }),
    });
  }
  return out;
}

/**
 * The latest progress update (progress_update_latest.txt, spec 3.8) without the values the update did
 * not carry: the file writes `N/A` and `?` for them, which status leaves out.
 */
function knownProgress(text: string): string {
  return text
    .split('\n')
    .flatMap((line) => {
      const tasks = /^- Tasks: ([^/]*)\/(.*)$/.exec(line);
      if (tasks === null) return /^- (?:Repository: N\/A|Issue: \?|Summary: N\/A)$/.test(line) ? [] : [line];
      const [, done = '?', total = '?'] = tasks;
      if (done === '?') return total === '?' ? [] : [`- Tasks: ${total} in total`];
      return [total === '?' ? `- Tasks: ${done} completed` : line];
    })
    .join('\n');
}

function queueTable(queues: readonly QueueSnapshot[]): string[] {
  const isDeliveredKnown = queues.every((q) => q.delivered !== undefined);
  const row = (name: string, pending: string, processing: string, retrying: string, delivered: string) =>
    `${name.padEnd(14)}${pending.padStart(8)}${processing.padStart(12)}${retrying.padStart(10)}${isDeliveredKnown ? delivered.padStart(11) : ''}`;
  return [
    row('queue', 'pending', 'processing', 'retrying', 'delivered'),
    ...queues.map((q) =>
      row(q.name, String(q.pending), String(q.processing), String(q.retrying), String(q.delivered)),
    ),
  ];
}

/**
 * `ignite status`: monitor state, queue counts, dead letters and the latest progress update. Delivered
 * counts come from the monitor's store (deliveredCounts); when it cannot be read the column is left out.
 */
export async function printStatus(
  ctx: CliContext,
  paths: IgnitePaths,
  workspace: string,
  isJson: boolean,
): Promise<void> {
  const pid = await monitorPid(paths);
  const queues = await snapshotQueues(paths, await deliveredCounts(ctx, paths.runtimeDir));
  const deadLetters = (await readdir(paths.deadLetter).catch(() => [])).filter((n) =>
    n.endsWith('.mime'),
  ).length;
  const heartbeat = await readFile(paths.stateFile('queue_monitor_heartbeat.json'), 'utf8').catch(() => '');
  const progress = (
    await readFile(paths.stateFile('progress_update_latest.txt'), 'utf8').catch(() => '')
  ).trim();
  if (isJson) {
    ctx.stdout.write(
      `${JSON.stringify({ workspace, runtimeDir: paths.runtimeDir, monitor: { running: pid !== null, pid, heartbeat: heartbeat.trim() }, queues, deadLetters, progress })}\n`,
    );
    return;
  }
  const lines = [
    `IGNITE workspace ${workspace} (runtime ${paths.runtimeDir})`,
    `monitor: ${pid === null ? 'stopped' : `running (pid ${pid})`}`,
    '',
    ...queueTable(queues),
    '',
    `dead letters: ${deadLetters}`,
    ...(progress === '' ? [] : ['', knownProgress(progress)]),
  ];
  ctx.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * The first turn of every agent without a recorded session (its instructions; the scripted agent answers
 * at once), through the one runner factory; the session ids go to `<rt>/state/.agent_session_<n>`.
 */
async function recordSessions(
  ctx: CliContext,
  paths: IgnitePaths,
  workspace: string,
  options: { workers: number; backend?: string },
): Promise<void> {
  const [
    { systemPrompts },
    { openRunners },
    { igniteIdentity },
    { installedBackends },
    { writeFileAtomic },
    { readSessionId },
    { createSystemClock },
    { createIdGenerator },
  ] = await Promise.all([
    import('./role-prompts.js'),
    import('../../hub/open-runners.js'),
    import('../../hub/agent-identities.js'),
    import('../../agents/selection/installed-backends.js'),
    import('../../gateways/ignite/mime/atomic-file.js'),
    import('../../gateways/ignite/leader-gate.js'),
    import('../../core/clock.js'),
    import('../../core/ids.js'),
  ]);
  const config = await ctx.loadConfig();
  const prompts = systemPrompts(paths.runtimeDir);
  const agents = orgAgents(options.workers);
  const clock = createSystemClock();
  // The monitor's store: a team budget spent by these first turns is the one the monitor goes on with.
  await using turns = await openRunners({
    config: { ...config, store: await monitorStoreUrl(ctx, paths.runtimeDir) },
    cwd: process.cwd(),
    env: ctx.env,
    logger: ctx.logger(config),
    clock,
    ids: createIdGenerator(clock),
    installed: await installedBackends(ctx.env),
    ...(options.backend !== undefined && { flags: { backend: options.backend } }),
    agents,
  });
  await Promise.all(
    agents.map(async (agent) => {
      const idx = agentIndex(agent) ?? 0;
      if ((await readSessionId(paths.state, idx)) !== '') return;
      const runner = turns.runners.runnerFor(agent, igniteIdentity(agent));
      const prompt = 'Read your instructions. Reply with READY and wait for messages.';
      const system = prompts(agent);
      const result = await runner.run({
        prompt,
        cwd: workspace,
        timeoutMs: 600_000,
        ...(system !== undefined && { systemPrompt: system }),
      });
      const sessionId = result.sessionId ?? (result.isError ? '' : `${agent}-${Date.now()}`);
      if (sessionId === '') {
        throw new MusubiError('AGENT_FAILED', `agent ${agent} did not start: ${turnFailureReason(result)}`);
      }
      await writeFileAtomic(join(paths.state, `.agent_session_${idx}`), `${sessionId}\n`);
    }),
  );
}

/**
 * `ignite start`: records a session for every agent without one (one first turn with its instructions;
 * the scripted agent answers at once), then starts `musubi ignite monitor` in the background with its
 * output in `<rt>/logs/queue_monitor.log`. Resolves the monitor's pid.
 */
export async function startOrganisation(
  ctx: CliContext,
  paths: IgnitePaths,
  workspace: string,
  options: { workers: number; backend?: string },
): Promise<number> {
  const running = await monitorPid(paths);
  if (running !== null) return running;
  await recordSessions(ctx, paths, workspace, options);
  const log = await open(join(paths.logs, 'queue_monitor.log'), 'a', 0o600);
  const g = ctx.globalOptions();
  const args = [
    ...process.execArgv,
    process.argv[1] ?? '',
    ...(g.store !== undefined ? ['--store', g.store] : []),
    ...(g.config !== undefined ? ['--config', g.config] : []),
    'ignite',
    'monitor',
    '-w',
    workspace,
    ...(options.backend !== undefined ? ['--backend', options.backend] : []),
  ];
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', log.fd, log.fd],
    env: { ...ctx.env, IGNITE_RUNTIME_DIR: paths.runtimeDir },
  });
  child.unref();
  await log.close();
  for (let i = 0; i < 100; i++) {
    const pid = await monitorPid(paths);
    if (pid !== null) return pid;
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new MusubiError(
    'GATEWAY_UNAVAILABLE',
    `the queue monitor did not start; see ${join(paths.logs, 'queue_monitor.log')}`,
  );
}

/** `ignite stop`: SIGTERM to the monitor, waiting up to `timeoutMs` for it to exit. Resolves its pid or null. */
export async function stopOrganisation(paths: IgnitePaths, timeoutMs: number): Promise<number | null> {
  const pid = await monitorPid(paths);
  if (pid === null) return null;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid) && Date.now() < deadline) await sleep(50);
  return pid;
}
