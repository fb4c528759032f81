import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexProviderEnvKeys } from './codex-config.js';

describe('codexProviderEnvKeys', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'musubi-codex-config-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('lists every provider env_key of $CODEX_HOME/config.toml', async () => {
    const toml = [
      'model_provider = "azure"',
      '[model_providers.azure]',
      'env_key = "AZURE_OPENAI_API_KEY"',
      '[model_providers.local]',
      "  env_key = 'LOCAL_KEY' # comment",
      '[model_providers.dup]',
      'env_key = "LOCAL_KEY"',
      'env_key_instructions = "not a key"',
      'env_key = "not a name"',
    ].join('\n');
    await writeFile(join(home, 'config.toml'), toml);
    expect(codexProviderEnvKeys({ CODEX_HOME: home })).toEqual(['AZURE_OPENAI_API_KEY', 'LOCAL_KEY']);
  });

  it('reads ~/.codex/config.toml when CODEX_HOME is unset', async () => {
    await mkdir(join(home, '.codex'));
    await writeFile(join(home, '.codex', 'config.toml'), 'env_key = "MY_KEY"\n');
    expect(codexProviderEnvKeys({ HOME: home })).toEqual(['MY_KEY']);
  });

  it('returns nothing when there is no config', () => {
    expect(codexProviderEnvKeys({ CODEX_HOME: join(home, 'missing') })).toEqual([]);
  });
});
