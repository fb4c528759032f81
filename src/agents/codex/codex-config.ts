import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const MAX_CONFIG_BYTES = 1024 * 1024;
/** `env_key = "NAME"` in a provider table; only names that can be environment variables are taken. */
const ENV_KEY_LINE =
  /^\s*env_key\s*=\s*(?:"([A-Za-z_][A-Za-z0-9_]*)"|'([A-Za-z_][A-Za-z0-9_]*)')\s*(?:#.*)?$/gm;

/**
 * The variables codex's own config names as provider keys: every `env_key` in
 * `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`), read from the environment the CLI will run
 * with. A custom provider (`[model_providers.x] env_key = "MY_KEY"`) reads its key from a variable no
 * static allowlist can know; these names let it through. Empty when the file is missing or unreadable.
 */
export function codexProviderEnvKeys(env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env['CODEX_HOME'] || join(env['HOME'] || homedir(), '.codex');
  const file = join(home, 'config.toml');
  let text: string;
  try {
    if (statSync(file).size > MAX_CONFIG_BYTES) return [];
    text = readFileSync(file, 'utf8');
  } catch {
    // No config (codex's defaults need no extra variable).
    return [];
  }
  const names = new Set<string>();
  for (const m of text.matchAll(ENV_KEY_LINE)) names.add(m[1] ?? m[2] ?? '');
  names.delete('');
  return [...names];
}
