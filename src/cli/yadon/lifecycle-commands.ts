import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  agentSocketPath,
  MANAGER_NAME,
  resolveSocketDir,
  resolveWorkerCount,
  workerNames,
} from '../../gateways/yadon/yadon-paths.js';
import type { CliContext } from '../cli-context.js';
import { coordinatorLaunch, hostEnvironment } from './coordinator.js';
import { readHostInfo } from './host-files.js';
import { startHostDaemon, stopHost, waitForSockets, type DaemonStart } from './host-process.js';
import { refusalLines } from './run-host.js';
import { redLine, RESET, YELLOW } from './yadon-output.js';
import { stopSignals, untilStopSignal } from '../stop-signals.js';

/** `yadon start` waits this long for the agent sockets (spec yadon.md 2.5). */
const SOCKET_WAIT_MS = 15_000;
const COORDINATOR_GRACE_MS = 5_000;

/** Global CLI flags passed on to the daemon, so it opens the same store and config. */
function globalArgs(ctx: CliContext): string[] {
  const g = ctx.globalOptions();
  return [
    ...(g.store === undefined ? [] : ['--store', g.store]),
    ...(g.config === undefined ? [] : ['--config', resolve(g.config)]),
    ...(g.logLevel === undefined ? [] : ['--log-level', g.logLevel]),
  ];
}

function agentSockets(dir: string, count: number): string[] {
  return [...workerNames(count), MANAGER_NAME].map((n) => agentSocketPath(dir, n));
}

/** Prints why a daemon did not come up; resolves the exit code (0 when it is ready). */
function reportStart(ctx: CliContext, started: DaemonStart): number {
  switch (started.kind) {
    case 'ready':
      for (const w of started.warnings) ctx.stdout.write(`${YELLOW}!${RESET} ${w}\n`);
      return 0;
    case 'refused':
      ctx.stderr.write(refusalLines(started.path));
      return 1;
    case 'failed':
      ctx.stdout.write(redLine('エラー', started.message));
      return 1;
    case 'exited':
      ctx.stdout.write(
        redLine(
          'エラー',
          `agent host exited with ${String(started.code)} (see ${resolveSocketDir(ctx.env)}/yadon-host.log)`,
        ),
      );
      return 1;
  }
}

/** `yadon stop`: stops this socket directory's host only, removes its sockets and pid file. Exit 0. */
export async function stopCommand(ctx: CliContext): Promise<void> {
  ctx.stdout.write('停止中...\n');
  await stopHost(resolveSocketDir(ctx.env));
  ctx.stdout.write('停止完了\n');
}

/** `yadon host [work_dir]` without `--foreground`: starts only the agent host as a daemon. */
export async function hostDaemonCommand(ctx: CliContext, workDir: string | undefined): Promise<number> {
  const dir = resolveSocketDir(ctx.env);
  const started = await startHostDaemon({
    dir,
    workDir: resolve(workDir ?? '.'),
    env: ctx.env,
    globalArgs: globalArgs(ctx),
  });
  const code = reportStart(ctx, started);
  if (started.kind === 'ready')
    ctx.stdout.write(`ヤドン・エージェントホスト起動 (pid ${started.pid}, ${dir})\n`);
  return code;
}

/**
 * `yadon start [work_dir] [--multi-llm]` (spec yadon.md 6): banner, stop the old host, start the host
 * daemon, wait for the agent sockets, run the coordinator in the foreground; when it exits (or on
 * SIGINT) stop the host. Resolves the coordinator's exit code (0 after SIGINT).
 */
export async function startCommand(
  ctx: CliContext,
  options: { workDir?: string; isMultiLlm: boolean },
): Promise<number> {
  const theme = ctx.env['YADON_THEME'];
  if (theme !== undefined && theme !== '' && theme !== 'yadon') {
    ctx.stdout.write(redLine('エラー', `未対応のテーマです: ${theme} (yadon のみ対応)`));
    return 1;
  }
  const workDir = resolve(options.workDir ?? '.');
  if ((await stat(workDir).catch(() => null))?.isDirectory() !== true) {
    ctx.stdout.write(redLine('エラー', `作業ディレクトリが見つかりません (${workDir})`));
    return 1;
  }
  const dir = resolveSocketDir(ctx.env);
  const count = resolveWorkerCount(ctx.env);
  const host = hostEnvironment(ctx.env, count, options.isMultiLlm);
  ctx.stdout.write(`ヤドン・エージェント 起動中...\nヤドン数: ${count}\n`);
  if (options.isMultiLlm) {
    ctx.stdout.write('マルチLLMモード:\n');
    for (const row of host.table) ctx.stdout.write(`  ヤドン${row.n}: ${row.backend}\n`);
  }
  await stopHost(dir);
  const started = await startHostDaemon({ dir, workDir, env: host.env, globalArgs: globalArgs(ctx) });
  const code = reportStart(ctx, started);
  if (code !== 0) return code;
  ctx.stdout.write('エージェントソケット待機中...');
  const isReady = await waitForSockets(agentSockets(dir, count), SOCKET_WAIT_MS);
  ctx.stdout.write(
    isReady ? ' OK\n' : `\n${YELLOW}!${RESET} 一部のエージェントソケットが作成されませんでした\n`,
  );
  const exitCode = await runCoordinator(ctx, workDir);
  await stopHost(dir);
  ctx.stdout.write('停止完了\n');
  return exitCode;
}

/** Runs the coordinator in the foreground (or waits for SIGINT when there is none). */
async function runCoordinator(ctx: CliContext, workDir: string): Promise<number> {
  const launch = coordinatorLaunch(ctx.env, workDir);
  if (launch === null) {
    // Listening before saying so: a Ctrl-C right after the line must not find the default handler.
    const stopped = untilStopSignal();
    ctx.stdout.write('コーディネーターなし (scripted): Ctrl-C で停止します\n');
    await stopped;
    return 0;
  }
  const child = spawn(launch.command, [...launch.args], { cwd: workDir, env: launch.env, stdio: 'inherit' });
  let isInterrupted = false;
  const signals = stopSignals();
  void signals.stopped.then(() => {
    isInterrupted = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), COORDINATOR_GRACE_MS).unref();
  });
  try {
    return await new Promise<number>((resolveCode) => {
      child.once('error', (err) => {
        ctx.stdout.write(redLine('エラー', `${launch.command}: ${err.message}`));
        resolveCode(1);
      });
      child.once('exit', (code) => resolveCode(isInterrupted ? 0 : (code ?? 1)));
    });
  } finally {
    signals.dispose();
  }
}

/**
 * `yadon _restart`: stops the host, waits 1 s, starts a host with the work_dir, YADON_COUNT,
 * LLM_BACKEND and per-worker backends recorded by the one it replaced, waits for its sockets and prints
 * `再起動が完了しました`. Exit 0.
 */
export async function restartAgentsCommand(ctx: CliContext): Promise<void> {
  const dir = resolveSocketDir(ctx.env);
  const info = await readHostInfo(dir);
  await stopHost(dir);
  await delay(1_000);
  const env: NodeJS.ProcessEnv = { ...ctx.env };
  if (info !== null) {
    env['YADON_COUNT'] = String(info.workerCount);
    if (info.llmBackend === null) delete env['LLM_BACKEND'];
    else env['LLM_BACKEND'] = info.llmBackend;
    for (let n = 1; n <= 8; n++) delete env[`YADON_${n}_BACKEND`];
    for (const [n, backend] of Object.entries(info.workerBackends)) env[`YADON_${n}_BACKEND`] = backend;
    env['MUSUBI_STORE'] = info.store;
  }
  const count = resolveWorkerCount(env);
  const started = await startHostDaemon({
    dir,
    workDir: info?.workDir ?? process.cwd(),
    env,
    globalArgs: globalArgs(ctx),
    ...(info !== null && { cwd: info.cwd }),
  });
  if (reportStart(ctx, started) !== 0) return;
  await waitForSockets(agentSockets(dir, count), SOCKET_WAIT_MS);
  ctx.stdout.write('再起動が完了しました\n');
}
