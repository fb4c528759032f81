import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { MusubiError } from '../../core/errors.js';
import {
  loadIgniteSettings,
  type IgniteConfigSettings,
  type IgniteSettings,
  type IgniteSettingsSources,
} from './ignite-settings.js';

/** Inputs of {@link loadMonitorSettings}. */
export interface MonitorSettingsSources {
  readonly runtimeDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `gateways.ignite` of musubi.yaml (`musubi up`). */
  readonly musubiConfig?: IgniteConfigSettings;
  /** `-i` / `-s` of `musubi ignite monitor`. */
  readonly flags?: IgniteSettingsSources['flags'];
}

/** The first `system.yaml` of `$IGNITE_CONFIG_DIR`, `<rt>/`, `<rt>/config/`, parsed; undefined when none. */
async function readSystemYaml(
  runtimeDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<unknown> {
  const candidates = [
    env['IGNITE_CONFIG_DIR'] ? join(env['IGNITE_CONFIG_DIR'], 'system.yaml') : '',
    join(runtimeDir, 'system.yaml'),
    join(runtimeDir, 'config', 'system.yaml'),
  ];
  for (const path of candidates.filter((p) => p !== '')) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) continue;
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw new MusubiError('CONFIG_INVALID', `${path}: not valid YAML`, { cause: err });
    }
  }
  return undefined;
}

/**
 * Loads the queue monitor's settings of a runtime dir, the one way both `musubi ignite monitor` and the
 * hub's IGNITE gateway (`musubi up`) do: defaults < system.yaml < musubi.yaml < environment < flags.
 * Rejects with CONFIG_INVALID for a system.yaml that is not YAML or any value out of range.
 */
export async function loadMonitorSettings(sources: MonitorSettingsSources): Promise<IgniteSettings> {
  return loadIgniteSettings({
    systemYaml: await readSystemYaml(sources.runtimeDir, sources.env),
    env: sources.env,
    ...(sources.musubiConfig !== undefined && { musubiConfig: sources.musubiConfig }),
    ...(sources.flags !== undefined && { flags: sources.flags }),
  });
}
