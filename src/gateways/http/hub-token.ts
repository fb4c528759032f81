import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';
import { readHubRecord, removeHubRecord, writeHubRecord } from './hub-record-file.js';

/** The environment a token folder is resolved from (the CLI's, never `process.env` read here). */
export type TokenEnv = Readonly<Record<string, string | undefined>>;

/** Bytes of randomness in a hub token: 256 bits, 43 characters of base64url. */
const TOKEN_BYTES = 32;

/**
 * A fresh per-hub secret (as Jupyter makes one per server): 43 characters of base64url, inside the
 * alphabet the config schema allows for `gateways.http.token`.
 */
export function createHubToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/**
 * The folder only this user can read where hubs leave their tokens: `$XDG_RUNTIME_DIR/musubi` when the
 * session has a runtime folder (a tmpfs of the user's, mode 0700), else `$XDG_STATE_HOME/musubi`
 * (default `~/.local/state/musubi`). Relative variables are ignored, as the XDG spec asks.
 */
export function hubTokenDir(env: TokenEnv): string {
  const runtime = env['XDG_RUNTIME_DIR'];
  if (runtime !== undefined && runtime.startsWith('/')) return join(runtime, 'musubi');
  const state = env['XDG_STATE_HOME'];
  if (state !== undefined && state.startsWith('/')) return join(state, 'musubi');
  const home = env['HOME'] !== undefined && env['HOME'].startsWith('/') ? env['HOME'] : homedir();
  return join(home, '.local', 'state', 'musubi');
}

/** The token file of the hub whose dashboard listens on `port` (one listener per port on a machine). */
export function hubTokenPath(dir: string, port: number): string {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new MusubiError('CONFIG_INVALID', `no token file for port ${port}`);
  }
  return join(dir, `hub-${port}.json`);
}

/** What a hub leaves in its token file: enough for a CLI command to reach it. */
export const hubTokenFileSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  token: z.string().regex(/^[A-Za-z0-9._~+/=-]{16,512}$/),
  pid: z.number().int().positive(),
});
export type HubTokenFile = z.infer<typeof hubTokenFileSchema>;

/**
 * Makes `dir` (mode 0700) and checks it is a real folder of this user that nobody else can open: a
 * folder another user made (or a symlink planted there) would hand them the token. Throws
 * GATEWAY_UNAVAILABLE naming the folder otherwise.
 */
async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) {
    throw new MusubiError(
      'GATEWAY_UNAVAILABLE',
      `the token folder ${dir} is not a folder of this user; remove it or set XDG_RUNTIME_DIR`,
    );
  }
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

/**
 * Writes the token file atomically (temp file + rename), mode 0600 in a 0700 folder. Rejects with
 * GATEWAY_UNAVAILABLE when the folder is not this user's, or with the file system's error.
 */
export async function writeHubTokenFile(path: string, dir: string, record: HubTokenFile): Promise<void> {
  await privateDir(dir);
  await writeHubRecord(path, record);
}

/** The record in `path`, or undefined when it is missing, unreadable (another user's) or not a record. */
export function readHubTokenFile(path: string): Promise<HubTokenFile | undefined> {
  return readHubRecord(path, hubTokenFileSchema);
}

/** Removes the token file when it still belongs to `url` (a newer hub on the port may have replaced it). */
export function removeHubTokenFile(path: string, url: string): Promise<void> {
  return removeHubRecord(path, url, hubTokenFileSchema);
}
