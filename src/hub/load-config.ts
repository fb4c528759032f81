import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { configSchema, type Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';

/** The config file looked for in the working directory when none is named. */
export const DEFAULT_CONFIG_FILE = 'musubi.yaml';

/** Inputs of {@link loadConfig}, in increasing precedence after the file. */
export interface LoadConfigOptions {
  readonly cwd: string;
  /** Explicit config path (--config); it must exist. Without it ./musubi.yaml is read when present. */
  readonly configPath?: string;
  readonly env: NodeJS.ProcessEnv;
  /** Global flags (--store, --log-level). */
  readonly flags?: { readonly store?: string; readonly logLevel?: string };
}

type Json = Record<string, unknown>;

function setPath(target: Json, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    const child: Json = typeof next === 'object' && next !== null && !Array.isArray(next) ? { ...next } : {};
    node[key] = child;
    node = child;
  }
  const last = path.at(-1);
  if (last !== undefined) node[last] = value;
}

function intFromEnv(name: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `environment variable ${name} must be a non-negative integer, got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw.trim());
}

/** Environment overrides: variable -> config path (and how to read it). */
const ENV_OVERRIDES: ReadonlyArray<{ name: string; path: readonly string[]; kind: 'string' | 'int' }> = [
  { name: 'MUSUBI_STORE', path: ['store'], kind: 'string' },
  { name: 'MUSUBI_LOG_LEVEL', path: ['log', 'level'], kind: 'string' },
  { name: 'MUSUBI_LEASE_MS', path: ['bus', 'leaseMs'], kind: 'int' },
  { name: 'MUSUBI_MAX_ATTEMPTS', path: ['bus', 'retry', 'maxAttempts'], kind: 'int' },
  { name: 'MUSUBI_POLL_INTERVAL_MS', path: ['bus', 'pollIntervalMs'], kind: 'int' },
  { name: 'MUSUBI_HTTP_PORT', path: ['gateways', 'http', 'port'], kind: 'int' },
  { name: 'MUSUBI_HTTP_TOKEN', path: ['gateways', 'http', 'token'], kind: 'string' },
];

async function readConfigFile(options: LoadConfigOptions): Promise<Json> {
  const path = resolve(options.cwd, options.configPath ?? DEFAULT_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const isMissing = err instanceof Error && 'code' in err && err.code === 'ENOENT';
    if (isMissing && options.configPath === undefined) return {};
    throw new MusubiError(
      'CONFIG_INVALID',
      `cannot read config file ${path}: ${isMissing ? 'no such file' : String(err)}`,
      { cause: err },
    );
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `${path}: not valid YAML: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (parsed === null || parsed === undefined) return {};
  const object = z.record(z.string(), z.unknown()).safeParse(parsed);
  if (!object.success) throw new MusubiError('CONFIG_INVALID', `${path}: the top level must be a mapping`);
  return object.data;
}

/**
 * Loads the configuration: defaults < file < environment < flags, validated by one schema.
 * Throws CONFIG_INVALID listing every issue with its path.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<Config> {
  const merged: Json = { ...(await readConfigFile(options)) };
  for (const o of ENV_OVERRIDES) {
    const raw = options.env[o.name];
    if (raw === undefined || raw === '') continue;
    setPath(merged, o.path, o.kind === 'int' ? intFromEnv(o.name, raw) : raw);
  }
  if (options.flags?.store !== undefined) setPath(merged, ['store'], options.flags.store);
  if (options.flags?.logLevel !== undefined) setPath(merged, ['log', 'level'], options.flags.logLevel);
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new MusubiError('CONFIG_INVALID', `invalid configuration: ${issues.join('; ')}`, {
      details: { issues },
    });
  }
  return result.data;
}
