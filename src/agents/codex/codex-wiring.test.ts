import { describe, expect, it } from 'vitest';
import { CODEX_ENDPOINT_KEY_ENV, CODEX_ENDPOINT_MODEL, wireCodex } from './codex-wiring.js';

describe('codex wiring', () => {
  it('points CODEX_HOME at a config.toml whose custom provider is the endpoint', () => {
    const wiring = wireCodex({ url: 'http://127.0.0.1:4321/', configDir: '/cfg' });
    expect(wiring.env).toEqual({ CODEX_HOME: '/cfg/codex', [CODEX_ENDPOINT_KEY_ENV]: 'musubi-local' });
    expect(wiring.model).toBe(CODEX_ENDPOINT_MODEL);
    expect(wiring.files.map((f) => f.path)).toEqual(['/cfg/codex/config.toml']);
    const toml = wiring.files[0]?.content ?? '';
    expect(toml).toMatch(/^model_provider = "musubi"$/m);
    expect(toml).toMatch(/^model = "gpt-5\.5"$/m);
    expect(toml).toContain('[model_providers.musubi]');
    expect(toml).toMatch(/^base_url = "http:\/\/127\.0\.0\.1:4321\/v1"$/m);
    expect(toml).toMatch(/^wire_api = "responses"$/m);
    expect(toml).toMatch(/^env_key = "MUSUBI_ENDPOINT_KEY"$/m);
    expect(toml).toMatch(/^supports_websockets = false$/m);
    expect(toml).toMatch(/^request_max_retries = 1$/m);
    expect(toml).toMatch(/^stream_max_retries = 1$/m);
  });

  it('switches off the update check, analytics and the plugin sync that call remote hosts', () => {
    const toml = wireCodex({ url: 'http://127.0.0.1:1', configDir: '/cfg' }).files[0]?.content ?? '';
    expect(toml).toMatch(/^check_for_update_on_startup = false$/m);
    expect(toml).toMatch(/\[analytics\]\nenabled = false/);
    expect(toml).toMatch(/\[features\]\nplugins = false\nremote_plugin = false\napps = false/);
  });

  it('keeps the workspace-write sandbox out of /tmp, where concurrent sandboxes race', () => {
    const toml = wireCodex({ url: 'http://127.0.0.1:1', configDir: '/cfg' }).files[0]?.content ?? '';
    expect(toml).toMatch(
      /\[sandbox_workspace_write\]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true/,
    );
  });

  it('sends the given key', () => {
    expect(
      wireCodex({ url: 'http://127.0.0.1:1', configDir: '/c', apiKey: 'k-1' }).env[CODEX_ENDPOINT_KEY_ENV],
    ).toBe('k-1');
  });
});
