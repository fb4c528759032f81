import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AgentBackend } from '../../agents/agent-runner.js';
import type { ModelTier } from '../../agents/selection/backend-aliases.js';
import type { AgentProtocol } from '../../bus/agent-directory.js';
import { configSchema, type Config } from '../../core/config.schema.js';
import type { LogLevel } from '../../core/logger.js';

/** The demo's state folder below the working directory unless `--state` names another. */
export const DEFAULT_DEMO_STATE_DIR = join('.musubi', 'demo');

/**
 * Retry settings of the demo's bus: the default three attempts, but a short backoff (250 ms base, 1 s
 * cap instead of 5 s / 300 s) so the retries of the injected failure are seen within seconds.
 */
export const DEMO_RETRY = { baseMs: 250, capMs: 1_000, maxAttempts: 3 } as const;
/** yadon workers of the demo team. */
export const DEMO_WORKERS = 2;

/** One member of the demo team. */
export interface DemoMember {
  readonly name: string;
  readonly protocol: AgentProtocol;
  readonly role: string;
  /** The model tier of its turns; absent for the lead, which is the demo itself and runs no agent. */
  readonly tier?: ModelTier;
}

/** The mixed team: yadon manager and workers, two agent_sync peers, one agent straight on the bus. */
export const DEMO_TEAM: readonly DemoMember[] = [
  { name: 'yadoran', protocol: 'yadon', role: 'manager', tier: 'manager' },
  ...Array.from({ length: DEMO_WORKERS }, (_, i) => ({
    name: `yadon-${i + 1}`,
    protocol: 'yadon' as const,
    role: 'worker',
    tier: 'worker' as const,
  })),
  { name: 'lead', protocol: 'agent-sync', role: 'lead' },
  { name: 'tester', protocol: 'agent-sync', role: 'tester', tier: 'worker' },
  { name: 'scribe', protocol: 'bus', role: 'scribe', tier: 'worker' },
];

/** The agent_sync peers (`AGENTS_LIST`), the lead first so it becomes the round's implementer. */
export const AGENT_SYNC_PEERS = ['lead', 'tester'] as const;

/** Time limits: the scripted agent answers in milliseconds, real CLIs take minutes per turn. */
export function demoTimeouts(backend: AgentBackend): { readonly turnMs: number; readonly runMs: number } {
  return backend === 'scripted' ? { turnMs: 60_000, runMs: 300_000 } : { turnMs: 600_000, runMs: 3_600_000 };
}

/** Where one demo run keeps its things. */
export interface DemoPaths {
  readonly stateDir: string;
  /** The hub's SQLite database. */
  readonly storeFile: string;
  /** The scratch copy of the sample project the team works on. */
  readonly projectDir: string;
  /** JSON-lines log of the hub (the terminal shows progress instead). */
  readonly logFile: string;
  /** The dashboard URL file (`musubi dashboard` reads it). */
  readonly urlFile: string;
  /** agent_sync's working directory (its round logs). */
  readonly agentSyncDir: string;
}

/** The paths of a demo state folder (`stateDir` relative to `cwd`). */
export function demoPaths(cwd: string, stateDir: string = DEFAULT_DEMO_STATE_DIR): DemoPaths {
  const dir = resolve(cwd, stateDir);
  return {
    stateDir: dir,
    storeFile: join(dir, 'bus.db'),
    projectDir: join(dir, 'project'),
    logFile: join(dir, 'demo.log'),
    urlFile: join(dir, 'dashboard.json'),
    agentSyncDir: join(dir, 'agent-sync'),
  };
}

/**
 * Removes what an earlier run left (its database, scratch project and round logs), so counts and files
 * describe this run only. Only the demo's own paths are touched, never anything else in the folder.
 */
export async function clearDemoState(paths: DemoPaths): Promise<void> {
  const targets = [
    paths.storeFile,
    `${paths.storeFile}-wal`,
    `${paths.storeFile}-shm`,
    paths.projectDir,
    paths.urlFile,
    paths.agentSyncDir,
  ];
  await Promise.all(targets.map((t) => rm(t, { recursive: true, force: true })));
}

/** The hub configuration of the demo: SQLite in the state folder, the demo's retry settings. */
export function demoConfig(paths: DemoPaths, logLevel: LogLevel): Config {
  return configSchema.parse({
    store: `sqlite:${paths.storeFile}`,
    log: { level: logLevel },
    bus: { retry: DEMO_RETRY },
  });
}
