import type { AgentBackend } from '../agents/agent-runner.js';
import { createHubRunners, type HubRunners } from './hub-runners.js';
import { openHub, type OpenHubOptions } from './hub.js';
import type { RunnerFlags } from './runner-plan.js';

/** Options of {@link openRunners}. */
export interface OpenRunnersOptions extends OpenHubOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly installed: ReadonlySet<AgentBackend>;
  readonly flags?: RunnerFlags;
  /** The agents whose turns will run (undefined: a turn of no agent); their budgets decide about the store. */
  readonly agents: readonly (string | undefined)[];
}

/** The runner factory of a command that runs turns without gateways. */
export interface RunnersHub extends AsyncDisposable {
  readonly runners: HubRunners;
  /** Closes the hub if one was opened. Idempotent. */
  close(): Promise<void>;
}

/**
 * The one runner factory for turns outside a running hub (`musubi agent run`, the first turns of
 * `ignite start`). A team budget is counted in the store, so the configured store is opened only when
 * one of `agents` has one. Throws AGENT_BACKEND_UNKNOWN for an unknown backend flag or config entry;
 * rejects like `openHub`.
 */
export async function openRunners(options: OpenRunnersOptions): Promise<RunnersHub> {
  const { config, env, installed } = options;
  const flags = options.flags === undefined ? {} : { flags: options.flags };
  const storeless = createHubRunners({ config, env, installed, ...flags });
  if (options.agents.every((agent) => storeless.planOf(agent).budget === undefined)) {
    const close = (): Promise<void> => Promise.resolve();
    return { runners: storeless, close, [Symbol.asyncDispose]: close };
  }
  const hub = await openHub(options);
  const runners = createHubRunners({ config, env, installed, bus: hub.bus, ...flags });
  return { runners, close: hub.close, [Symbol.asyncDispose]: hub.close };
}
