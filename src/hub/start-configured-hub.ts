import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { AgentDirectory } from '../bus/agent-directory.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { buildGateways, type BuiltGateways } from './build-gateways.js';
import { setupsFromConfig, type GatewaySetups } from './gateway-setups.js';
import { createHubRunners, type HubRunners } from './hub-runners.js';
import { startHub, type Hub } from './hub.js';
import type { RunnerFlags } from './runner-plan.js';

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
  /**
   * The gateways to run, each with its setup. Default: every gateway the config enables, set up from
   * it (`musubi up`); a standalone command names only its own.
   */
  readonly gateways?: GatewaySetups;
  /** A backend and model named on the command line, for every agent. */
  readonly runnerFlags?: RunnerFlags;
  /** Wraps each agent's runner once when it is built (the demo's observers and injected fault). */
  readonly decorateRunner?: (agent: string, runner: AgentRunner, directory: AgentDirectory) => AgentRunner;
}

/** A hub started from config: its runner factory, agent directory and gateways by protocol. */
export interface ConfiguredHub extends Hub {
  readonly runners: HubRunners;
  readonly directory: AgentDirectory;
  readonly byKind: BuiltGateways;
}

/**
 * Starts one running configuration (`musubi up`, a drop-in's server, the demo): store, bus, task
 * registry, one agent directory and the one runner factory, then the gateways. The IGNITE settings
 * (system.yaml) are read before anything starts. Rejects like {@link startHub} (after closing what
 * started), with AGENT_BACKEND_UNKNOWN for an unknown backend flag or config entry, or with
 * CONFIG_INVALID for a bad system.yaml.
 */
export async function startConfiguredHub(options: StartConfiguredHubOptions): Promise<ConfiguredHub> {
  const { config, cwd, env, logger, clock, ids } = options;
  const setups = options.gateways ?? (await setupsFromConfig(config, env, cwd));
  let assembled: { runners: HubRunners; directory: AgentDirectory; byKind: BuiltGateways } | undefined;
  const hub = await startHub({
    config,
    cwd,
    logger,
    clock,
    ids,
    gateways: ({ bus, tasks }) => {
      const directory = new AgentDirectory({ bus, clock });
      const decorate = options.decorateRunner;
      const runners = createHubRunners({
        config,
        env,
        bus,
        installed: options.installed,
        recordTurns: { clock, ids, logger },
        // An agent runs as the hub's user and could read the dashboard's token file: never store it.
        ...(setups.http?.token !== undefined && { extraSecrets: [setups.http.token] }),
        ...(options.runnerFlags !== undefined && { flags: options.runnerFlags }),
        ...(decorate !== undefined && {
          decorate: (agent: string, runner: AgentRunner) => decorate(agent, runner, directory),
        }),
      });
      const installed = options.installed;
      const deps = { bus, tasks, config, logger, clock, ids, env, runners, directory, cwd, installed };
      assembled = { runners, directory, byKind: buildGateways(deps, setups) };
      return [...assembled.byKind.all];
    },
  });
  if (assembled === undefined) {
    await hub.close();
    throw new MusubiError('INTERNAL', 'the hub started without its gateways');
  }
  return { ...hub, ...assembled };
}
