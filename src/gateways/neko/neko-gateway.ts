import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AgentRunner } from '../../agents/agent-runner.js';
import type { ChildReaper } from '../../agents/process/child-reaper.js';
import type { AgentDirectory } from '../../bus/agent-directory.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { Channel } from '../../teams/executor/channel.js';
import { ExecutorTeam } from '../../teams/executor/executor-team.js';
import type { RestoreProbeTimings } from '../../teams/executor/intent-restore.js';
import type { LlmSettings } from '../../teams/executor/llm-call.js';
import type { Gateway, GatewayAddress } from '../gateway.js';
import { buildNekoChannels } from './build-channels.js';
import { NekoBusIntake } from './bus-intake.js';
import { createNekoEvents, enableEverything } from './neko-events.js';
import { parseInboundFrame } from './neko-frames.js';
import { buildNekoHttpApp } from './neko-http.js';
import { RequestGuard } from '../http/index.js';
import type { NekoSettings } from './neko-settings.js';
import { snapshotObject } from './neko-wire.js';
import { ZmqAgentBridge, type FrameSource } from './zmq-agent-bridge.js';

/** Analyses still running at stop() get this long before the bridge closes anyway. */
const STOP_DRAIN_MS = 10_000;

/** Collaborators and settings of {@link createNekoGateway}. */
export interface NekoGatewayOptions {
  readonly bus: Pick<Bus, 'kv' | 'publish'>;
  /** The hub's shared task registry (the gateway never closes it). */
  readonly registry: TaskRegistry;
  readonly logger: Logger;
  readonly clock: Clock;
  /** `resolveNekoSettings(config.neko, env, cwd)`. */
  readonly settings: NekoSettings;
  /** The runner of an `agents.<name>` entry or a backend name (assessor and cli-agent channels). */
  readonly runnerFor: (agent: string) => AgentRunner;
  /** The environment shell and plugin commands pick their allowlisted variables from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  /** Channels to use instead of the configured ones (tests, benchmarks). */
  readonly channels?: readonly Channel[];
  /** Re-reads the settings for POST /notify_config_changed; without it the current ones are re-probed. */
  readonly reloadSettings?: () => Promise<NekoSettings>;
  /** Where channels are shown as agents (protocol `neko`) for the dashboard. */
  readonly directory?: AgentDirectory;
  /** Forget persisted flags, intent, sessions and tasks at start (`musubi neko serve --fresh`). */
  readonly isFresh?: boolean;
  readonly restoreProbes?: RestoreProbeTimings;
  /**
   * The bus mailboxes of the channels' agents (`neko-<channel id>`): messages sent there run as tasks on
   * that channel and the outcome is mailed back (docs/bridging.md). Without it channels take no mail.
   */
  readonly mail?: Pick<Bus, 'consume' | 'send'>;
}

/** The N.E.K.O. gateway; `executor` is valid after start(). */
export interface NekoGateway extends Gateway {
  readonly executor: ExecutorTeam | undefined;
}

function llmOf(settings: NekoSettings, options: NekoGatewayOptions): LlmSettings | null {
  if (settings.assessor === undefined) return null;
  return {
    runner: options.runnerFor(settings.assessor.agent),
    cwd: settings.workDir,
    timeoutMs: settings.assessor.timeoutMs,
    clock: options.clock,
  };
}

/**
 * musubi as N.E.K.O.'s agent server (spec neko.md): the agent side of the ZeroMQ bridge (connects to
 * main's three sockets), the HTTP control API on `settings.httpHost:httpPort` (loopback only), and the
 * executor team over the shared task registry.
 *
 * `start()` listens on HTTP first (GATEWAY_ADDRESS_IN_USE / GATEWAY_UNAVAILABLE; `/agent/state` answers
 * 503 until ready), connects the bridge, then starts the executor (restart rules; their task updates go
 * out once the bridge is up). `stop()` closes HTTP, stops the executor (runs aborted, at most 10 s), waits
 * for analyses, then closes the sockets. Idempotent. The bus and the registry stay open.
 */
export function createNekoGateway(options: NekoGatewayOptions): NekoGateway {
  const log = options.logger.child({ component: 'gateway.neko' });
  const { registry, clock } = options;
  const instanceId = randomUUID();
  let settings = options.settings;
  let executor: ExecutorTeam | undefined;
  let bridge: ZmqAgentBridge | undefined;
  let intake: NekoBusIntake | undefined;
  let app: FastifyInstance | undefined;
  let address: GatewayAddress | undefined;
  let starting: Promise<void> | undefined;
  let startWork: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();

  const track = (work: Promise<unknown>): void => {
    const tracked = work
      .catch((err: unknown) => log.error({ err }, 'background work failed'))
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  const send = (event: Parameters<ZmqAgentBridge['send']>[0]): void => {
    if (bridge !== undefined) track(bridge.send(event));
  };

  const snapshot = async (): Promise<Record<string, unknown>> => {
    const team = executor;
    if (team === undefined) throw new MusubiError('GATEWAY_UNAVAILABLE', 'N.E.K.O. gateway not started');
    const swept = await registry.sweep();
    const active = await team.activeTasks();
    const parts = {
      state: team.flags.state,
      gate: team.gate(),
      active,
      notification: team.flags.takeNotification(),
      now: clock.now(),
    };
    if (swept.deleted.length + swept.timedOut.length > 0) track(emitStatus());
    return snapshotObject(parts);
  };

  async function emitStatus(): Promise<void> {
    send({ event_type: 'agent_status_update', lanlan_name: null, snapshot: await snapshot() });
  }

  const onFrame = (frame: Buffer, source: FrameSource): void => {
    const event = parseInboundFrame(frame);
    if (event.kind === 'ignored') return void log.debug({ source, reason: event.reason }, 'frame ignored');
    if (event.kind === 'restore')
      return track(executor?.restoreSignal(event.sessionKey, event.isNewSession) ?? Promise.resolve());
    // Ack first, before anything else happens for this request — also when the server is switched off.
    if (event.eventId !== undefined) {
      send({
        event_type: 'analyze_ack',
        lanlan_name: event.input?.sessionKey ?? null,
        event_id: event.eventId,
      });
    }
    if (event.input !== undefined && executor !== undefined) track(executor.analyze(event.input));
  };

  const reloadConfig = async (): Promise<string> => {
    if (executor === undefined) return 'not started';
    if (options.reloadSettings === undefined || options.channels !== undefined) {
      executor.reconfigure({});
      return 'channels re-probed';
    }
    settings = await options.reloadSettings();
    const built = await buildNekoChannels(settings, options);
    for (const problem of built.problems) log.warn({ problem }, 'plugin skipped');
    executor.reconfigure({ channels: built.channels, llm: llmOf(settings, options) });
    return `configuration reloaded: ${built.channels.length} channel(s)`;
  };

  const start = async (): Promise<void> => {
    const built =
      options.channels === undefined
        ? await buildNekoChannels(settings, options)
        : { channels: [...options.channels], problems: [] };
    for (const problem of built.problems) log.warn({ problem }, 'plugin skipped');
    const events = createNekoEvents({
      send,
      emitStatus: () => track(emitStatus()),
      clock,
      log,
      ...(options.directory !== undefined && { directory: options.directory }),
    });
    const team = new ExecutorTeam({
      registry,
      kv: options.bus.kv,
      clock,
      logger: options.logger,
      channels: built.channels,
      llm: llmOf(settings, options),
      events,
      isProactiveEnabled: settings.isProactiveEnabled,
      isAutoRestoreEnabled: settings.isAutoRestoreEnabled,
      ...(options.restoreProbes !== undefined && { restoreProbes: options.restoreProbes }),
    });
    executor = team;
    if (options.mail !== undefined)
      intake = new NekoBusIntake({ bus: options.mail, registry, executor: team, logger: log });
    if (options.isFresh === true) await team.reset();
    const guard = new RequestGuard({
      host: settings.httpHost,
      port: () => (address?.kind === 'tcp' ? address.port : settings.httpPort),
    });
    app = buildNekoHttpApp(
      { instanceId, executor: team, registry, clock, snapshot, emitStatus, reloadConfig },
      log,
      { guard },
    );
    try {
      await app.listen({ host: settings.httpHost, port: settings.httpPort });
    } catch (err) {
      const code = err instanceof Error && 'code' in err ? String(err.code) : '';
      throw new MusubiError(
        code === 'EADDRINUSE' ? 'GATEWAY_ADDRESS_IN_USE' : 'GATEWAY_UNAVAILABLE',
        `N.E.K.O. HTTP API cannot listen on ${settings.httpHost}:${settings.httpPort}`,
        { cause: err },
      );
    }
    const bound = app.server.address();
    address = {
      kind: 'tcp',
      host: settings.httpHost,
      port: typeof bound === 'object' && bound !== null ? bound.port : settings.httpPort,
    };
    bridge = new ZmqAgentBridge({
      host: '127.0.0.1',
      ports: settings.zmq,
      logger: log,
      clock,
      onFrame,
      heartbeatMs: settings.heartbeatMs,
    });
    bridge.start();
    await team.start();
    if (settings.enableOnStart) await enableEverything(team);
    await events.announce(built.channels);
    intake?.start();
    log.info(
      { http: address, zmq: settings.zmq, channels: built.channels.length },
      'N.E.K.O. agent server up',
    );
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const failures: unknown[] = [];
      const step = async (work: () => Promise<unknown>): Promise<void> => {
        try {
          await work();
        } catch (err) {
          failures.push(err);
        }
      };
      await step(async () => startWork?.catch(() => undefined));
      await step(async () => app?.close());
      await step(async () => intake?.close());
      await step(async () => executor?.stop());
      await step(() => waitAtMost(Promise.allSettled([...inFlight]), STOP_DRAIN_MS));
      await step(async () => bridge?.close());
      if (failures.length > 0) throw new AggregateError(failures, 'N.E.K.O. gateway stop had failures');
    })();
    return stopping;
  };

  const gateway: NekoGateway = {
    name: 'neko',
    get executor() {
      return executor;
    },
    start: () => {
      startWork ??= start();
      starting ??= startWork.catch(async (err: unknown) => {
        await stop().catch(() => undefined); // the start error is the one worth reporting
        throw err;
      });
      return starting;
    },
    address() {
      if (address === undefined) throw new MusubiError('GATEWAY_UNAVAILABLE', 'N.E.K.O. gateway not started');
      return address;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
  return gateway;
}

async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([work, timeout]);
  clearTimeout(timer);
}
