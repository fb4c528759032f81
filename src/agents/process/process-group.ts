import { readdirSync, readFileSync } from 'node:fs';

function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Reads `/proc/<pid>/stat` as [state, ppid, pgrp]. The command name (field 2) may hold spaces and
 * parentheses, so the fields are counted from the last `)`.
 */
function readStat(pid: string): { state: string; ppid: number; pgrp: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // The process went away between readdir and read: it is simply not there.
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ppid: Number(fields[1]), pgrp: Number(fields[2]) };
}

const hasProc = (() => {
  try {
    readdirSync('/proc/self');
    return true;
  } catch {
    // No procfs (macOS): fall back to kill(…, 0), which also counts zombies.
    return false;
  }
})();

/**
 * True when `pid` exists and is not a zombie. Zombies count as dead: an orphaned grandchild whose
 * parent died is re-parented to PID 1, and in containers whose init never reaps, it stays a zombie
 * forever while holding no resources.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
  if (!hasProc) return true;
  const stat = readStat(String(pid));
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/** True when any live (non-zombie) process is still in process group `pgid`. */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
  if (!hasProc) return true;
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = readStat(entry);
    if (stat !== null && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

/**
 * The other process groups started from group `pgid`: the groups of every live process that descends
 * (by parent pid) from a member of `pgid` but left it with setsid/setpgid — opencode runs each shell
 * command in a session of its own, which a signal to the agent's group never reaches. Read from /proc
 * (empty without it); take it before signalling, since orphans are re-parented to init.
 */
export function descendantGroups(pgid: number): number[] {
  if (!hasProc) return [];
  const children = new Map<number, number[]>();
  const groupOf = new Map<number, number>();
  const queue: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = readStat(entry);
    if (stat === null || stat.state === 'Z' || stat.state === 'X') continue;
    const pid = Number(entry);
    groupOf.set(pid, stat.pgrp);
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
    if (stat.pgrp === pgid) queue.push(pid);
  }
  const groups = new Set<number>();
  const seen = new Set(queue);
  while (queue.length > 0) {
    const pid = queue.pop() ?? 0;
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
      const group = groupOf.get(child);
      if (group !== undefined && group !== pgid && group > 1) groups.add(group);
    }
  }
  return [...groups];
}

/** Sends `signal` to every process of group `pgid`. Returns false when the group is already gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ESRCH') return false;
    throw err;
  }
}
