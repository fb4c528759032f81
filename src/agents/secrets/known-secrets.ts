import type { Config } from '../../core/config.schema.js';
import { CLI_BACKENDS } from '../cli/cli-backends.js';
import { BASE_ENV_ALLOWLIST } from '../process/child-env.js';

/**
 * Names that hold a secret by their look: API keys, tokens, secrets, passwords, passphrases, an auth
 * file's content (`ANTHROPIC_API_KEY`, `GH_TOKEN`, `AZURE_CLIENT_SECRET`, `OPENCODE_AUTH_CONTENT`,
 * config `token`, `apiKey`); not `maxTokens`, `*_TOKEN_FILE` or `*_KEY_COMMAND`, which hold none.
 */
const SECRET_NAME = /(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|AUTH_CONTENT)$/i;

/** `scheme://user:password@` or `scheme://token@` (a NATS token) at the start of a value. */
const URL_USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^@/?#\s]+)@/;
/** Query parameters that carry a credential (`?token=`, `&password=`, `&api_key=`). */
const URL_SECRET_PARAM = /[?&](?:token|pass|password|secret|key|api_?key|access_token)=([^&#\s]+)/gi;

/** Inputs of {@link knownSecrets}. */
export interface KnownSecretsInput {
  readonly config: Config;
  /** The environment agents inherit from (the daemon's own). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

function isMatch(name: string, pattern: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/** A value as written and, when it differs, URL-decoded: output may show either. */
function withDecoded(value: string): string[] {
  try {
    const decoded = decodeURIComponent(value);
    return decoded === value ? [value] : [value, decoded];
  } catch {
    // Not valid percent-encoding: the value can only appear as written.
    return [value];
  }
}

/** The credentials inside a URL-like value: the password (or token) of its user info, secret parameters. */
function urlCredentials(value: string): string[] {
  const found: string[] = [];
  const userinfo = URL_USERINFO.exec(value)?.[1];
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    found.push(...withDecoded(colon < 0 ? userinfo : userinfo.slice(colon + 1)));
  }
  for (const m of value.matchAll(URL_SECRET_PARAM)) found.push(...withDecoded(m[1] ?? ''));
  return found;
}

/** Every `passEnv` entry of the config: the backends' defaults and the agents'. */
function passEnvOf(config: Config): string[] {
  const entries = [...Object.values(config.backends), ...Object.values(config.agents)];
  return entries.flatMap((e) => e?.passEnv ?? []);
}

/** The string leaves of `value` with the name of the key they sit under (an array's key for its items). */
function* stringLeaves(value: unknown, key = ''): Generator<{ key: string; value: string }> {
  if (typeof value === 'string') yield { key, value };
  else if (Array.isArray(value)) for (const item of value) yield* stringLeaves(item, key);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) yield* stringLeaves(v, k);
}

/** The secrets of the environment that agents inherit (see {@link knownSecrets}). */
function envSecrets(config: Config, env: KnownSecretsInput['env']): string[] {
  const passEnv = passEnvOf(config);
  const backends = Object.values(CLI_BACKENDS);
  // Named one by one to be handed over: a provider key (a codex `env_key`), a `passEnv` name.
  const named = new Set([
    ...backends.flatMap((b) => b.authEnvFrom?.(env) ?? []),
    ...passEnv.filter((p) => !p.endsWith('*')),
  ]);
  const patterns = [...BASE_ENV_ALLOWLIST, ...backends.flatMap((b) => b.authEnv), ...named, ...passEnv];
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !patterns.some((p) => isMatch(name, p))) continue;
    if (named.has(name) || SECRET_NAME.test(name)) found.push(value);
    else found.push(...urlCredentials(value));
  }
  return found;
}

/**
 * The secret values musubi hands to agents or holds in its config, to mask in everything agents print
 * (see `SecretMask`):
 * - of the environment agents inherit (the base allowlist, every backend's auth variables, `passEnv`):
 *   the variables named one by one (a `passEnv` name, a codex provider's `env_key`), those with a
 *   secret's name (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, passwords), and the credentials in the URL of any
 *   other (a proxy's `user:password@`). A variable a prefix passes (`AWS_*`, `FAKE_AGENT_*`) whose name
 *   is no secret's stays unmasked: a region or a flag is no secret, and masking it would wreck texts;
 * - of musubi.yaml: every value under a secret's name (`gateways.http.token`, an agent's `env`
 *   `GH_TOKEN`) and the credentials in every URL (the store's `nats://user:pass@`, `?token=`).
 * Values are not filtered by length here; the mask ignores short ones. Never throws.
 */
export function knownSecrets(input: KnownSecretsInput): string[] {
  const found = envSecrets(input.config, input.env);
  for (const leaf of stringLeaves(input.config)) {
    if (SECRET_NAME.test(leaf.key)) found.push(leaf.value);
    found.push(...urlCredentials(leaf.value));
  }
  return [...new Set(found)];
}
