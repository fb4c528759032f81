import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import { pyStr } from '../../core/python/repr.js';
import { exchangeWithAgent } from './yadon-client.js';
import { agentSocketPath, MANAGER_NAME, workerNames } from './yadon-paths.js';

/** Per-probe deadline (spec yadon.md 2.5). */
export const STATUS_PROBE_MS = 5_000;

const replySchema = z.record(z.string(), z.unknown());

async function probeOne(path: string, clock: Clock, timeoutMs: number): Promise<string> {
  if ((await lstat(path).catch(() => null)) === null) return 'stopped';
  const reply = await exchangeWithAgent(path, { type: 'status', from: MANAGER_NAME }, { timeoutMs, clock });
  if (!reply.ok) return 'unreachable';
  const parsed = replySchema.safeParse(reply.value);
  if (!parsed.success || Array.isArray(reply.value)) return 'unreachable';
  return Object.hasOwn(parsed.data, 'state') ? pyStr(parsed.data['state']) : 'unknown';
}

/**
 * The manager's `workers` map (spec yadon.md 3.3): `yadon-1` … `yadon-N` in order, each `stopped` (no
 * socket file), `unreachable` (probe failed: timeout, refused, bad reply), `unknown` (reply without
 * `state`) or the worker's own state. Probes run concurrently, each limited to `timeoutMs`.
 */
export async function probeWorkers(options: {
  readonly socketDir: string;
  readonly workerCount: number;
  readonly clock: Clock;
  readonly timeoutMs?: number;
}): Promise<Record<string, string>> {
  const names = workerNames(options.workerCount);
  const states = await Promise.all(
    names.map((name) =>
      probeOne(agentSocketPath(options.socketDir, name), options.clock, options.timeoutMs ?? STATUS_PROBE_MS),
    ),
  );
  return Object.fromEntries(names.map((name, i) => [name, states[i] ?? 'unknown']));
}
