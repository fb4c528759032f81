import type { AgentBackend } from '../../agents/agent-runner.js';
import { claudeRootNotice } from '../../agents/claude/claude-backend.js';
import { CLI_BACKENDS } from '../../agents/cli/cli-backends.js';
import { installedBackends } from '../../agents/selection/installed-backends.js';
import { createSystemClock } from '../../core/clock.js';
import type { Config } from '../../core/config.schema.js';
import { isMusubiError } from '../../core/errors.js';
import { createIdGenerator } from '../../core/ids.js';
import { hostSocketPaths, resolveSocketDir, resolveWorkerCount } from '../../gateways/yadon/yadon-paths.js';
import { yadonAgents } from '../../hub/agent-identities.js';
import { planRunner } from '../../hub/runner-plan.js';
import { startConfiguredHub } from '../../hub/start-configured-hub.js';
import type { CliContext } from '../cli-context.js';
import { removeHostFiles, writeHostFiles } from './host-files.js';
import { untilStopSignal } from '../stop-signals.js';

/** What a host tells the process that started it (over IPC when it is a daemon). */
export type HostReport =
  | { readonly kind: 'ready'; readonly pid: number; readonly warnings: readonly string[] }
  | { readonly kind: 'refused'; readonly path: string }
  | { readonly kind: 'failed'; readonly message: string };

/** The refusal of spec yadon.md 2.2 (stderr, exit 1). */
export function refusalLines(path: string): string {
  return `エラー: ソケットが既に使用中です (${path})\n別の yadon が稼働中です。先にそれを停止してください\n`;
}

/** Who runs each yadon agent, as the host reports and logs it (no settings, no environment). */
interface AgentPlan {
  readonly name: string;
  readonly backend: AgentBackend;
  readonly model?: string;
  readonly source: string;
  readonly permissionMode?: string;
}

/** The plans of the manager and workers, by the rules the hub's runner factory applies. */
function planAgents(
  config: Config,
  env: CliContext['env'],
  count: number,
  installed: ReadonlySet<AgentBackend>,
): AgentPlan[] {
  return yadonAgents(count).map(({ name, identity }) => {
    const plan = planRunner({ config, env, isInstalled: (b) => installed.has(b), agent: name, identity });
    return {
      name,
      backend: plan.backend,
      source: plan.source,
      ...(plan.model !== undefined && { model: plan.model }),
      ...(plan.settings.permissionMode !== undefined && { permissionMode: plan.settings.permissionMode }),
    };
  });
}

/** `agent CLI 'gemini' not found on PATH (yadon-2, yadon-4)` for every selected CLI that is missing. */
function missingCliWarnings(plans: readonly AgentPlan[], installed: ReadonlySet<AgentBackend>): string[] {
  const missing = new Map<string, string[]>();
  for (const p of plans) {
    if (p.backend === 'scripted' || installed.has(p.backend)) continue;
    const command = CLI_BACKENDS[p.backend].command;
    missing.set(command, [...(missing.get(command) ?? []), p.name]);
  }
  return [...missing].map(
    ([command, agents]) => `agent CLI '${command}' not found on PATH (${agents.join(', ')})`,
  );
}

/**
 * Runs the yadon agent host in this process (`musubi yadon host --foreground`): the hub with the yadon
 * gateway alone on the configured store, in the socket directory and with the worker count of the
 * yadon environment (YADON_SOCKET_DIR, YADON_COUNT), its runners from the hub's one factory. Reports
 * readiness or refusal through `report`, writes the pid and info files, serves until SIGINT/SIGTERM,
 * then closes in reverse order and removes its files. Resolves the exit code.
 */
export async function runYadonHost(options: {
  readonly ctx: CliContext;
  readonly workDir: string;
  readonly report: (report: HostReport) => void;
}): Promise<number> {
  const { ctx, workDir } = options;
  const env = ctx.env;
  const socketDir = resolveSocketDir(env);
  const count = resolveWorkerCount(env);
  const config = await ctx.loadConfig();
  const rootLogger = ctx.logger(config);
  const logger = rootLogger.child({ component: 'yadon-host' });
  const clock = createSystemClock();
  const installed = await installedBackends(env);
  const plans = planAgents(config, env, count, installed);
  const warnings = missingCliWarnings(plans, installed);
  for (const warning of warnings) logger.warn({ warning }, 'selected agent CLI is missing');
  const isRoot = process.getuid?.() === 0;
  for (const plan of plans) {
    const notice = plan.backend === 'claude' ? claudeRootNotice(isRoot, env, plan.permissionMode) : undefined;
    if (notice !== undefined)
      logger.warn({ agentId: plan.name, warning: notice }, 'claude runs with fewer permissions');
  }
  let hub;
  try {
    hub = await startConfiguredHub({
      config,
      cwd: process.cwd(),
      env,
      logger: rootLogger,
      clock,
      ids: createIdGenerator(clock),
      installed,
      gateways: { yadon: { socketDir, workerCount: count, workDir } },
    });
  } catch (err) {
    if (isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')) {
      const path = typeof err.details?.['path'] === 'string' ? err.details['path'] : socketDir;
      ctx.stderr.write(refusalLines(path));
      options.report({ kind: 'refused', path });
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    ctx.stderr.write(`エラー: ${message}\n`);
    options.report({ kind: 'failed', message });
    return 1;
  }
  const workerBackends = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [String(i + 1), env[`YADON_${i + 1}_BACKEND`]] as const).filter(
      (e): e is readonly [string, string] => e[1] !== undefined,
    ),
  );
  await writeHostFiles(socketDir, {
    pid: process.pid,
    workDir,
    cwd: process.cwd(),
    workerCount: count,
    llmBackend: env['LLM_BACKEND'] ?? null,
    workerBackends,
    store: config.store,
    sockets: hostSocketPaths(socketDir, count),
  });
  logger.info({ socketDir, workDir, agents: plans }, 'yadon host ready');
  options.report({ kind: 'ready', pid: process.pid, warnings });
  await untilStopSignal();
  await hub.close().catch((err: unknown) => logger.error({ err }, 'yadon host shutdown had failures'));
  await removeHostFiles(socketDir, process.pid);
  return 0;
}
