import { join } from 'node:path';
import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

/** The variable the wired provider reads its key from (`env_key`); codexBackend inherits it. */
export const CODEX_ENDPOINT_KEY_ENV = 'MUSUBI_ENDPOINT_KEY';
/**
 * The model the wiring selects: codex 0.171's last model with classic tools (`exec_command`, the free-form
 * `apply_patch`), whose requests are the smallest. Its newer models (gpt-5.6-*, gpt-6*, the default
 * gpt-6.2-sol) run in "code mode" (one JavaScript `exec` tool in an `additional_tools` input item); the
 * endpoint drives those too (dialects/codex-code-mode.ts), so `-m <any catalog model>` works as well.
 */
export const CODEX_ENDPOINT_MODEL = 'gpt-5.5';

/** A TOML basic string (JSON's escapes are a subset of TOML's for the characters a URL or name holds). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/**
 * Points codex (0.171.0) at a model endpoint: `CODEX_HOME=<configDir>/codex` with a `config.toml` that
 * selects a custom provider `musubi` (`base_url = <url>/v1`, `wire_api = "responses"`, key from
 * {@link CODEX_ENDPOINT_KEY_ENV}, websockets off) and switches off every remote call this version makes
 * at startup: the update check, analytics, and the curated plugin sync (github.com, chatgpt.com). The
 * workspace-write sandbox leaves out /tmp (see below), so concurrent turns cannot trip over each other.
 * Retries are kept at one each, so a flaky or cut answer is retried at once and a dead endpoint fails
 * fast instead of after codex's default five attempts.
 */
export const wireCodex: WireCli = ({ url, configDir, apiKey }) => {
  const home = join(configDir, 'codex');
  const config = [
    'model_provider = "musubi"',
    `model = ${tomlString(CODEX_ENDPOINT_MODEL)}`,
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    // Concurrent workspace-write sandboxes share /tmp as a writable root and race on its read-only
    // `/tmp/.aws`/`.git` mounts (bwrap: "Can't remount readonly on /newroot/tmp/.aws"): rehearsals run
    // many codex turns at once, so the sandbox keeps to the turn's cwd.
    '[sandbox_workspace_write]',
    'exclude_slash_tmp = true',
    'exclude_tmpdir_env_var = true',
    '',
    '[model_providers.musubi]',
    'name = "musubi model endpoint"',
    `base_url = ${tomlString(`${url.replace(/\/+$/, '')}/v1`)}`,
    'wire_api = "responses"',
    `env_key = ${tomlString(CODEX_ENDPOINT_KEY_ENV)}`,
    'request_max_retries = 1',
    'stream_max_retries = 1',
    'supports_websockets = false',
    '',
  ].join('\n');
  return {
    env: { CODEX_HOME: home, [CODEX_ENDPOINT_KEY_ENV]: apiKey ?? LOCAL_API_KEY },
    files: [{ path: join(home, 'config.toml'), content: config }],
    model: CODEX_ENDPOINT_MODEL,
  };
};
