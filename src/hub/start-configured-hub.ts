import type { AgentBackend } from '../agents/agent-runner.js';
import { AgentDirectory } from '../bus/agent-directory.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { buildGateways, prepareIgnite } from './build-gateways.js';
import { createHubRunners } from './hub-runners.js';
import { startHub, type Hub } from './hub.js';

/** Inputs of {@link startConfiguredHub}. */
export interface StartConfiguredHubOptions {
  readonly config: Config;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** CLI backends whose binary is installed (`installedBackends(env)`). */
  readonly installed: ReadonlySet<AgentBackend>;
}

/**
 * Starts the hub `musubi up` runs: store, bus, task registry, one agent directory and one runner factory,
 * and every gateway the config enables. The IGNITE settings (system.yaml) are read before anything
 * starts. Rejects like {@link startHub}, or with CONFIG_INVALID for a bad system.yaml.
 */
export async function startConfiguredHub(options: StartConfiguredHubOptions): Promise<Hub> {
  const { config, cwd, env, logger, clock, ids } = options;
  const ignite = await prepareIgnite(config, env, cwd);
  return startHub({
    config,
    cwd,
    logger,
    clock,
    ids,
    gateways: ({ bus, tasks }) =>
      buildGateways({
        bus,
        tasks,
        config,
        logger,
        clock,
        ids,
        env,
        cwd,
        runners: createHubRunners({ config, env, bus, installed: options.installed }),
        directory: new AgentDirectory({ bus, clock }),
        ...(ignite !== undefined && { ignite }),
      }),
  });
}
