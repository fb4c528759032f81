import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isOneLine } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { isMailboxName } from '../../core/names.js';

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: not a usable directory, which is all the caller asks.
    return false;
  }
};

/** Inputs of {@link resolveWorkspace} (spec/ignite.md 2.1). */
export interface WorkspaceSources {
  /** `-w DIR`. */
  readonly flag?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Accept `WORKSPACE_DIR` as an alias of `IGNITE_WORKSPACE` (the queue monitor does). */
  readonly isMonitor?: boolean;
}

/**
 * The workspace: `-w DIR`, else `IGNITE_WORKSPACE` (the monitor also reads `WORKSPACE_DIR`), else the
 * current directory — which is also musubi's "default workspace of the installation".
 */
export function resolveWorkspace(sources: WorkspaceSources): string {
  const env = sources.env;
  const chosen =
    sources.flag ??
    (env['IGNITE_WORKSPACE'] || undefined) ??
    (sources.isMonitor === true ? env['WORKSPACE_DIR'] || undefined : undefined) ??
    sources.cwd;
  return resolve(sources.cwd, chosen);
}

/** The runtime dir: `IGNITE_RUNTIME_DIR`, else `<workspace>/.ignite` when it exists, else the workspace. */
export function resolveRuntimeDir(
  workspace: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const explicit = env['IGNITE_RUNTIME_DIR'];
  if (explicit !== undefined && explicit !== '') return resolve(workspace, explicit);
  const dotIgnite = join(workspace, '.ignite');
  return isDirectory(dotIgnite) ? dotIgnite : workspace;
}

/**
 * The folders and files of one IGNITE runtime dir. Every path built from an agent or file name goes
 * through {@link IgnitePaths.agentRoot} / {@link IgnitePaths.queueFileName}, which refuse unsafe names.
 */
export class IgnitePaths {
  readonly runtimeDir: string;
  readonly queue: string;
  readonly deadLetter: string;
  readonly state: string;
  readonly logs: string;

  constructor(runtimeDir: string) {
    this.runtimeDir = resolve(runtimeDir);
    this.queue = join(this.runtimeDir, 'queue');
    this.deadLetter = join(this.queue, 'dead_letter');
    this.state = join(this.runtimeDir, 'state');
    this.logs = join(this.runtimeDir, 'logs');
  }

  /** `<rt>/queue/<agent>`; throws MAILBOX_NAME_INVALID for a name that is not a safe folder name. */
  agentRoot(agent: string): string {
    if (!isMailboxName(agent)) {
      throw new MusubiError('MAILBOX_NAME_INVALID', `unsafe IGNITE agent name ${JSON.stringify(agent)}`);
    }
    return join(this.queue, agent);
  }

  /** `<rt>/queue/<agent>/processed`. */
  processed(agent: string): string {
    return join(this.agentRoot(agent), 'processed');
  }

  /** `<rt>/state/<name>` for a fixed state file name. */
  stateFile(name: string): string {
    return join(this.state, IgnitePaths.queueFileName(name));
  }

  /**
   * Returns `name` when it is a plain file name (no separator, not `.`/`..`, no NUL or line break);
   * throws GATEWAY_FRAME_INVALID otherwise. Queue file names come from directory listings and headers.
   */
  static queueFileName(name: string): string {
    if (!isQueueFileName(name)) {
      throw new MusubiError('GATEWAY_FRAME_INVALID', `unsafe queue file name ${JSON.stringify(name)}`);
    }
    return name;
  }
}

/** True when `name` is a plain file name: not empty, not `.`/`..`, no separator, NUL or line break. */
export function isQueueFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0\r\n]/.test(name);
}

/**
 * True when the monitor can take in a queue file of this name: a plain file name (above) that also fits
 * the envelope rule for header values (no control character but TAB), since its mirror carries the name.
 */
export function isDeliverableName(name: string): boolean {
  return isQueueFileName(name) && isOneLine(name);
}
