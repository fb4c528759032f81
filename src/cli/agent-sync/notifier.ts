import { appendFile, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MusubiError } from '../../core/errors.js';
import { pyJson, type PyJsonInput } from '../../core/python/json-dumps.js';
import { JsonNumber, isJsonObject, parseJson, type JsonValue } from '../../core/python/json-loads.js';
import { pyStr } from '../../core/python/repr.js';
import { ask, pause } from './poll.js';

/** True when `agent` can be part of a file name: no path separator, no NUL (so the file stays in its folder). */
export function isFileNamePart(agent: string): boolean {
  return !/[/\\\0]/.test(agent);
}

/**
 * Where an agent's notification files live: `.notifications_<agent>.jsonl` and `.notify_bell_<agent>`.
 * Throws USAGE_INVALID for a name that would put them elsewhere (see {@link isFileNamePart}).
 */
export function notifyPaths(dir: string, agent: string): { readonly log: string; readonly bell: string } {
  if (!isFileNamePart(agent)) {
    throw new MusubiError(
      'USAGE_INVALID',
      `agent name ${JSON.stringify(agent)} cannot name a notification file (no /, \\ or NUL)`,
    );
  }
  return { log: join(dir, `.notifications_${agent}.jsonl`), bell: join(dir, `.notify_bell_${agent}`) };
}

/** Appends one notification, then creates the bell file if missing, then rings (BEL on stdout). */
export async function writeNotification(
  dir: string,
  agent: string,
  notification: { readonly [key: string]: PyJsonInput | undefined },
  stdout: NodeJS.WritableStream,
): Promise<void> {
  const paths = notifyPaths(dir, agent);
  await appendFile(paths.log, `${pyJson(notification)}\n`, 'utf8');
  await (await open(paths.bell, 'a')).close();
  stdout.write('\x07');
}

/** check-notify: unread notifications (bell present) as indented JSON; clears the bell, keeps the log. */
export async function checkNotify(dir: string, agent: string): Promise<string> {
  const paths = notifyPaths(dir, agent);
  const isUnread = await open(paths.bell, 'r').then(
    async (handle) => (await handle.close(), true),
    () => false,
  );
  const notifications: JsonValue[] = [];
  if (isUnread) {
    const text = await readFile(paths.log, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const parsed = parseJson(line);
      if (parsed.ok) notifications.push(parsed.value);
    }
    await rm(paths.bell, { force: true });
  }
  return pyJson({ notifications, count: notifications.length }, { indent: 2 });
}

/** clear-notify: removes both files (missing ones are fine). */
export async function clearNotify(dir: string, agent: string): Promise<void> {
  const paths = notifyPaths(dir, agent);
  await rm(paths.log, { force: true });
  await rm(paths.bell, { force: true });
}

/** Settings of {@link runNotifier}. */
export interface NotifierOptions {
  readonly agent: string;
  readonly host: string;
  readonly port: number;
  readonly intervalMs: number;
  readonly dir: string;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly signal?: AbortSignal;
}

const now = (): JsonNumber => JsonNumber.float(Date.now() / 1000);

/**
 * notifier: polls status; on a phase or round change (not on the first poll) writes a phase_change
 * notification; in SHUTDOWN writes a shutdown notification and resolves 0. Sends a heartbeat for the
 * agent after each poll; never listens, so it never consumes mail. Resolves 0 when `signal` aborts.
 */
export async function runNotifier(o: NotifierOptions): Promise<number> {
  notifyPaths(o.dir, o.agent); // refuses, before the first poll, a name that cannot name its files
  const target = { host: o.host, port: o.port };
  let previous: { phase: string; round: string } | undefined;
  while (o.signal?.aborted !== true) {
    const reply = await ask(target, { cmd: 'status' });
    const data = reply?.get('data');
    if (data === undefined || !isJsonObject(data)) {
      o.stderr.write(`[agent_sync] Waiting for server on port ${o.port}...\n`);
    } else {
      const phase = pyStr(data.get('phase') ?? '');
      const roundValue = data.get('round') ?? null;
      const current = { phase, round: pyStr(roundValue) };
      if (previous !== undefined && (previous.phase !== current.phase || previous.round !== current.round)) {
        await writeNotification(
          o.dir,
          o.agent,
          { type: 'phase_change', from_phase: previous.phase, to_phase: phase, round: roundValue, ts: now() },
          o.stdout,
        );
      }
      previous = current;
      if (phase === 'SHUTDOWN') {
        await writeNotification(o.dir, o.agent, { type: 'shutdown', ts: now() }, o.stdout);
        return 0;
      }
      await ask(target, { cmd: 'heartbeat', agent: o.agent });
    }
    await pause(o.intervalMs, o.signal);
  }
  return 0;
}
