import { join } from 'node:path';
import { MusubiError } from '../../core/errors.js';
import { parsePyInt } from '../../core/python/numbers.js';

/** The manager's agent name. */
export const MANAGER_NAME = 'yadoran';
/** Default and bounds of `YADON_COUNT`. */
const DEFAULT_WORKER_COUNT = 4;
const MAX_WORKER_COUNT = 8;
/** The socket directory when `YADON_SOCKET_DIR` is unset or empty. */
const DEFAULT_SOCKET_DIR = '/tmp';
/** Longest AF_UNIX path (bytes, without the terminating NUL): 107 on Linux, 103 on macOS and BSDs. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

type Env = Readonly<Record<string, string | undefined>>;

/** The socket directory: `YADON_SOCKET_DIR` when set and non-empty, else `/tmp` (spec yadon.md 2.1). */
export function resolveSocketDir(env: Env): string {
  const dir = env['YADON_SOCKET_DIR'];
  return dir === undefined || dir === '' ? DEFAULT_SOCKET_DIR : dir;
}

/**
 * N = `YADON_COUNT` parsed like Python `int()` and clamped to [1, 8]; unset, empty or not an integer
 * gives 4 (`"0"` → 1, `"100"` → 8, `"3.0"` → 4, `" 3 "` → 3).
 */
export function resolveWorkerCount(env: Env): number {
  const n = parsePyInt(env['YADON_COUNT'] ?? '');
  if (n === undefined) return DEFAULT_WORKER_COUNT;
  return Math.min(MAX_WORKER_COUNT, Math.max(1, n));
}

/** The name of worker n: `yadon-<n>`. */
export function workerName(n: number): string {
  return `yadon-${n}`;
}

/** `yadon-1` … `yadon-<count>`, in order. */
export function workerNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => workerName(i + 1));
}

/**
 * An agent name as it may appear in a socket file name (`status <agent_name>`): letters, digits,
 * `_ . -`, no leading dot, no separators. Throws USAGE_INVALID for anything else, so a name never
 * builds a path outside the socket directory.
 */
export function assertAgentName(name: string): string {
  if (/^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/.test(name)) return name;
  throw new MusubiError('USAGE_INVALID', `invalid agent name ${JSON.stringify(name)}`);
}

/** `<dir>/yadon-agent-<name>.sock`. */
export function agentSocketPath(dir: string, name: string): string {
  return join(dir, `yadon-agent-${assertAgentName(name)}.sock`);
}

/** `<dir>/yadon-pet-<pet>.sock`, where pet is `yadoran` or a bare worker number. */
export function petSocketPath(dir: string, pet: string): string {
  return join(dir, `yadon-pet-${assertAgentName(pet)}.sock`);
}

/** The pid file of the agent host of `dir`. */
export function hostPidPath(dir: string): string {
  return join(dir, 'yadon-host.pid');
}

/** The host's settings, recorded next to the pid file for `_restart`. */
export function hostInfoPath(dir: string): string {
  return join(dir, 'yadon-host.json');
}

/** The host's log (its stderr) when it runs as a daemon. */
export function hostLogPath(dir: string): string {
  return join(dir, 'yadon-host.log');
}

/** Every socket a host with `count` workers serves: manager and workers' agent sockets, then pets. */
export function hostSocketPaths(dir: string, count: number): string[] {
  const agents = [MANAGER_NAME, ...workerNames(count)].map((n) => agentSocketPath(dir, n));
  const pets = [MANAGER_NAME, ...workerNames(count).map((_, i) => String(i + 1))].map((p) =>
    petSocketPath(dir, p),
  );
  return [...agents, ...pets];
}
