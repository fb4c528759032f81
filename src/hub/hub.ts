import type { Bus } from '../bus/bus.types.js';
import { createBus } from '../bus/bus.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { Gateway } from '../gateways/gateway.js';
import type { Store } from '../store/store.js';
import { TaskRegistry } from '../tasks/task-registry.js';
import { openStore } from './open-store.js';

/** Collaborators of {@link openHub}. */
export interface OpenHubOptions {
  readonly config: Config;
  readonly cwd: string;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
}

/** Collaborators of {@link startHub}. */
export interface StartHubOptions extends OpenHubOptions {
  /** Builds the gateways the config enables; called once the bus is up. */
  readonly gateways?: (deps: {
    bus: Bus;
    tasks: TaskRegistry;
    config: Config;
    logger: Logger;
    clock: Clock;
  }) => Gateway[];
}

/** A running hub: store, bus and gateways, closed in reverse order of startup. */
export interface Hub extends AsyncDisposable {
  readonly store: Store;
  readonly bus: Bus;
  /** The one task registry every team and the dashboard share. */
  readonly tasks: TaskRegistry;
  readonly gateways: readonly Gateway[];
  /**
   * Stops gateways, then the task registry's timers, then closes the bus, then the store. Idempotent;
   * runs every step even if one fails.
   */
  close(): Promise<void>;
}

/** Runs `steps` in order, every one even after a failure; throws AggregateError of the failures. */
async function runAll(
  steps: ReadonlyArray<readonly [string, () => Promise<void>]>,
  logger: Logger,
): Promise<void> {
  const failures: unknown[] = [];
  for (const [name, step] of steps) {
    try {
      await step();
      logger.debug({ step: name }, 'shutdown step done');
    } catch (err) {
      logger.error({ step: name, err }, 'shutdown step failed');
      failures.push(err);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, 'hub shutdown had failures');
}

interface HubCore {
  readonly store: Store;
  readonly bus: Bus;
  readonly tasks: TaskRegistry;
}

async function openCore(options: OpenHubOptions): Promise<HubCore> {
  const { config, logger, clock } = options;
  const store = await openStore({
    url: config.store,
    cwd: options.cwd,
    clock,
    pollIntervalMs: config.bus.pollIntervalMs,
    ...(config.jetstream?.replicas !== undefined && { replicas: config.jetstream.replicas }),
    onOpened: (what) => logger.info(what),
  });
  const bus = createBus({
    store,
    clock,
    ids: options.ids,
    logger: logger.child({ component: 'bus' }),
    config: config.bus,
  });
  const tasks = new TaskRegistry({ bus, clock, logger: logger.child({ component: 'tasks' }) });
  return { store, bus, tasks };
}

/** The shutdown steps below the gateways: the task registry's timers, the bus, the store. */
function coreSteps(core: HubCore): ReadonlyArray<readonly [string, () => Promise<void>]> {
  return [
    ['tasks', () => core.tasks.close()],
    ['bus', () => core.bus.close()],
    ['store', () => core.store.close()],
  ];
}

/**
 * Opens the hub without gateways: the configured store, the bus and the task registry (the bus, KV
 * and DLQ commands, `musubi mcp`, the one-agent servers). Rejects like `openStore`.
 */
export async function openHub(options: OpenHubOptions): Promise<Hub> {
  const core = await openCore(options);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= runAll(coreSteps(core), options.logger));
  return { ...core, gateways: [], close, [Symbol.asyncDispose]: close };
}

/**
 * Starts the hub: config -> store -> bus -> gateways. If a gateway fails to start (before or after it
 * listens), it and everything started before it are closed again and the error is rethrown, so the
 * process can exit and a supervisor restart it.
 */
export async function startHub(options: StartHubOptions): Promise<Hub> {
  const { config, logger, clock } = options;
  const core = await openCore(options);
  const { store, bus, tasks } = core;
  let gateways: Gateway[] = [];
  const started: Gateway[] = [];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= runAll(
      [
        ...[...started].reverse().map((g) => [`gateway.${g.name}`, () => g.stop()] as const),
        ...coreSteps(core),
      ],
      logger,
    );
    return closing;
  };
  try {
    gateways = options.gateways?.({ bus, tasks, config, logger, clock }) ?? [];
    for (const gateway of gateways) {
      // A gateway that fails after it listened must be closed too: it is stopped with the others.
      started.push(gateway);
      await gateway.start();
      logger.info({ gateway: gateway.name, address: gateway.address() }, 'gateway listening');
    }
  } catch (err) {
    await close().catch(() => undefined); // the start error is the one worth reporting
    throw err;
  }
  logger.info({ store: store.kind }, 'hub started');
  return { store, bus, tasks, gateways: started, close, [Symbol.asyncDispose]: close };
}
