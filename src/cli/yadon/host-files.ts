import { constants } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { z } from 'zod';
import { hostInfoPath, hostPidPath } from '../../gateways/yadon/yadon-paths.js';

/** What a host records next to its pid file, so `stop` and `_restart` can act on exactly that host. */
const hostInfoSchema = z.object({
  pid: z.number().int().positive(),
  workDir: z.string(),
  cwd: z.string(),
  workerCount: z.number().int().min(1),
  /** The raw `LLM_BACKEND` the host got (null when unset). */
  llmBackend: z.string().nullable(),
  /** The raw `YADON_<n>_BACKEND` values the host got, by n. */
  workerBackends: z.record(z.string(), z.string()),
  store: z.string(),
  sockets: z.array(z.string()),
});

/** A host's recorded settings. */
export type HostInfo = z.infer<typeof hostInfoSchema>;

/** Writes `text` to `path` with mode 0600, never following a symlink planted at the path. */
async function writePrivateFile(path: string, text: string): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const handle = await open(path, flags, 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/** Records the running host: `<dir>/yadon-host.pid` (its pid) and `<dir>/yadon-host.json` (its settings). */
export async function writeHostFiles(dir: string, info: HostInfo): Promise<void> {
  await writePrivateFile(hostPidPath(dir), `${info.pid}\n`);
  await writePrivateFile(hostInfoPath(dir), `${JSON.stringify(info)}\n`);
}

/** The pid in `<dir>/yadon-host.pid`, or null when there is none (or it is not a pid). */
export async function readHostPid(dir: string): Promise<number | null> {
  const text = await readFile(hostPidPath(dir), 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return /^\d+$/.test(text.trim()) && pid > 1 ? pid : null;
}

/** The recorded settings of the host of `dir`, or null when missing or unreadable. */
export async function readHostInfo(dir: string): Promise<HostInfo | null> {
  const text = await readFile(hostInfoPath(dir), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const parsed = hostInfoSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    // A half-written or foreign file: treated as no record.
    return null;
  }
}

/** Removes the pid and info files, but only while they still name `pid` (a newer host keeps its own). */
export async function removeHostFiles(dir: string, pid: number): Promise<void> {
  if ((await readHostPid(dir)) !== pid) return;
  await unlink(hostPidPath(dir)).catch(() => undefined); // already gone: nothing to remove
  await unlink(hostInfoPath(dir)).catch(() => undefined);
}
