import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Clock } from '../core/clock.js';
import { DEFAULT_STORE_URL } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';
import { commonGitDirOf, ensureRepoFolder, repoFolderOf, repoTopOf } from '../runs/repo-folder.js';
import { parseNatsUrl, redactNatsUrl, type NatsLocation } from '../store/nats/nats-location.js';
import type { Store } from '../store/store.js';

/** A store URL split into its parts. */
export type StoreLocation =
  | { readonly kind: 'memory' }
  | {
      readonly kind: 'sqlite';
      readonly path: string;
      readonly synchronous: 'normal' | 'full';
      /** Set when the default store resolved to the repository's own folder: its top and git directory. */
      readonly repository?: { readonly top: string; readonly gitDir: string };
    }
  | NatsLocation;

/**
 * The store of the repository holding `cwd` when the URL is the default: `<top>/.musubi/bus.db`, the
 * same file from any folder of the repository, so `musubi run`, `musubi runs`, `musubi up` and
 * `musubi dashboard` meet in one store. Undefined outside a repository (the default stays relative to
 * `cwd`) and for any other URL.
 */
function repositoryStoreOf(url: string, cwd: string): StoreLocation | undefined {
  if (url !== DEFAULT_STORE_URL) return undefined;
  const top = repoTopOf(cwd);
  const gitDir = top === undefined ? undefined : commonGitDirOf(top);
  if (top === undefined || gitDir === undefined) return undefined;
  return {
    kind: 'sqlite',
    path: join(repoFolderOf(top), 'bus.db'),
    synchronous: 'normal',
    repository: { top, gitDir },
  };
}

/**
 * Parses `memory:`, `sqlite:<path>[?sync=normal|full]` (path relative to `cwd`) or
 * `nats://[user:pass@|token@]host[:port][,host...][?prefix=&token=&creds=&connectTimeoutMs=&retain=&replicas=]`
 * (see src/store/NATS-MAPPING.md). The default `sqlite:.musubi/bus.db` inside a git repository is the
 * repository's store, `<top>/.musubi/bus.db`, wherever in it `cwd` is. Throws STORE_URL_INVALID for
 * anything else.
 */
export function parseStoreUrl(url: string, cwd: string): StoreLocation {
  if (url === 'memory:' || url === 'memory') return { kind: 'memory' };
  const ofRepository = repositoryStoreOf(url, cwd);
  if (ofRepository !== undefined) return ofRepository;
  if (url.startsWith('nats://') || url.startsWith('tls://')) return parseNatsUrl(url);
  if (url.startsWith('sqlite:')) {
    const [rawPath = '', query = ''] = url.slice('sqlite:'.length).split('?', 2);
    const params = new URLSearchParams(query);
    const sync = params.get('sync') ?? 'normal';
    if (sync !== 'normal' && sync !== 'full') {
      throw new MusubiError(
        'STORE_URL_INVALID',
        `store URL ${JSON.stringify(url)}: sync must be normal or full`,
      );
    }
    for (const key of params.keys()) {
      if (key !== 'sync')
        throw new MusubiError(
          'STORE_URL_INVALID',
          `store URL ${JSON.stringify(url)}: unknown option ${JSON.stringify(key)}`,
        );
    }
    const path = rawPath.startsWith('//') ? rawPath.slice(2) : rawPath;
    if (path === '' || path.includes('\0')) {
      throw new MusubiError(
        'STORE_URL_INVALID',
        `store URL ${JSON.stringify(url)}: sqlite needs a file path (sqlite:<path>)`,
      );
    }
    return { kind: 'sqlite', path: resolve(cwd, path), synchronous: sync };
  }
  throw new MusubiError(
    'STORE_URL_INVALID',
    `unsupported store URL ${JSON.stringify(redactNatsUrl(url))} (supported: memory:, sqlite:<path>, nats://host:port, tls://host:port)`,
  );
}

/** The store URL with any password or token replaced by `***`, for output and logs. */
export function redactStoreUrl(url: string): string {
  return redactNatsUrl(url);
}

/** Options for {@link openStore}. */
export interface OpenStoreOptions {
  readonly url: string;
  readonly cwd: string;
  readonly clock: Clock;
  readonly pollIntervalMs: number;
  /** musubi.yaml `jetstream.replicas`: for a NATS store whose URL names no `replicas`. */
  readonly replicas?: number;
  /** Hears how the store was set up (a NATS store's replica count), for the start-up log. */
  readonly onOpened?: (what: string) => void;
}

/**
 * Opens the store a URL names, creating a SQLite file's folder (mode 0700) when missing. The store of a
 * repository (see {@link parseStoreUrl}) gets musubi's folder with its `info/exclude` line, and on its
 * first open takes over the runs an older musubi kept in `<git dir>/musubi/runs.db` (the notice goes to
 * `onOpened`). A NATS store retries its first connection with backoff, then rejects with STORE_UNAVAILABLE.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const location = parseStoreUrl(options.url, options.cwd);
  if (location.kind === 'memory') {
    const { MemoryStore } = await import('../store/memory/memory-store.js');
    return new MemoryStore({ clock: options.clock });
  }
  if (location.kind === 'nats') {
    const { NatsStore } = await import('../store/nats/nats-store.js');
    const asked = location.replicas ?? options.replicas;
    const store = await NatsStore.open({
      location: { ...location, ...(asked !== undefined && { replicas: asked }) },
      clock: options.clock,
    });
    options.onOpened?.(
      `NATS store: journal stream and KV bucket at ${store.replicas} replica${store.replicas === 1 ? '' : 's'} ` +
        (asked === undefined ? '(3 on a cluster of 3 or more servers, else 1)' : `(asked for ${asked})`),
    );
    return store;
  }
  if (location.repository === undefined)
    await mkdir(dirname(location.path), { recursive: true, mode: 0o700 });
  else {
    await ensureRepoFolder(location.repository.top, location.repository.gitDir);
    const { adoptLegacyRunStore } = await import('./legacy-run-store.js');
    const notice = await adoptLegacyRunStore(location.repository.gitDir, location.path);
    if (notice !== undefined) options.onOpened?.(notice);
  }
  const { SqliteStore } = await import('../store/sqlite/sqlite-store.js');
  return SqliteStore.open({
    path: location.path,
    clock: options.clock,
    synchronous: location.synchronous,
    pollIntervalMs: options.pollIntervalMs,
  });
}
