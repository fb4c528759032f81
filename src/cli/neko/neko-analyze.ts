import { isMusubiError } from '../../core/errors.js';
import { resolveNekoSettings } from '../../gateways/neko/neko-settings.js';
import type { NekoEvent } from '../../gateways/neko/neko-wire.js';
import { ZmqMainBridge } from '../../gateways/neko/zmq-main-bridge.js';
import type { CliContext } from '../cli-context.js';

/** How long the agent server gets to connect after main binds (it retries its connects every 100 ms). */
const CONNECT_WAIT_MS = 3_000;

/** Options of `musubi neko analyze`. */
export interface AnalyzeFlags {
  readonly text: string;
  readonly session: string;
  readonly timeoutMs: number;
  readonly waitMs: number;
}

function isResultOf(session: string, taskIds: ReadonlySet<string>) {
  return (e: NekoEvent): boolean =>
    e.event_type === 'task_result' && (taskIds.has(String(e['task_id'])) || e['lanlan_name'] === session);
}

/**
 * `musubi neko analyze "<text>"`: plays main for one finished turn. Binds the three sockets on
 * 127.0.0.1 (exit 1 when a port is in use), waits up to 3 s for the agent server to connect, publishes one
 * reliable `analyze_request` (spec 2.2), prints `{"acked", "event_id"}` and then every event (one JSON per
 * line, heartbeats left out) until the task's `task_result` or `waitMs`. Resolves the exit code.
 */
export async function analyzeCommand(ctx: CliContext, flags: AnalyzeFlags): Promise<number> {
  const config = await ctx.loadConfig();
  const settings = resolveNekoSettings(config.neko, ctx.env, process.cwd());
  let main: ZmqMainBridge;
  try {
    main = await ZmqMainBridge.bind({ ports: settings.zmq });
  } catch (err) {
    const reason = isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')
      ? 'ports in use (is main running?)'
      : String(err);
    ctx.stderr.write(`error: cannot bind the N.E.K.O. main sockets: ${reason}\n`);
    return 1;
  }
  const taskIds = new Set<string>();
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const pending: NekoEvent[] = [];
  let isPrinting = false;
  const print = (e: NekoEvent): void => {
    if (e.event_type === 'agent_bridge_heartbeat') return;
    if (!isPrinting) return void pending.push(e);
    ctx.stdout.write(`${JSON.stringify(e)}\n`);
    if (e.event_type === 'task_update' && e['lanlan_name'] === flags.session) {
      const task = e['task'];
      if (typeof task === 'object' && task !== null && 'id' in task) taskIds.add(String(task.id));
    }
    if (isResultOf(flags.session, taskIds)(e)) resolveDone();
  };
  main.onEvent(print);
  try {
    await main.waitForAgent(CONNECT_WAIT_MS);
    let eventId = '';
    const acked = await main.publishAnalyzeRequest(
      flags.session,
      'turn_end',
      [{ role: 'user', content: flags.text }],
      {
        ackTimeoutMs: flags.timeoutMs,
        onEventId: (id) => (eventId = id),
      },
    );
    ctx.stdout.write(`${JSON.stringify({ acked, event_id: eventId })}\n`);
    isPrinting = true;
    for (const e of pending.splice(0)) print(e);
    if (!acked) return 1;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, flags.waitMs)))]);
    clearTimeout(timer);
    return 0;
  } finally {
    await main.close();
  }
}
