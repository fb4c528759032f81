import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/config.schema.js';
import { knownSecrets } from './known-secrets.js';

describe('known secrets', () => {
  it('takes the keys and tokens the backends inherit, not the other variables they inherit', () => {
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-api-key-value',
      ANTHROPIC_AUTH_TOKEN: 'anthropic-auth-token',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999',
      CODEX_API_KEY: 'codex-api-key-value',
      GEMINI_API_KEY: 'gemini-api-key-value',
      COPILOT_PROVIDER_API_KEY: 'copilot-provider-key',
      GH_TOKEN: 'ghp_gh-token-value',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-access-key',
      AWS_REGION: 'eu-central-1',
      GOOGLE_APPLICATION_CREDENTIALS: '/home/me/adc.json',
      HTTPS_PROXY: 'http://me:proxy%2Fpassword@proxy.corp:3128',
      PATH: '/usr/local/bin:/usr/bin',
      UNRELATED_API_KEY: 'never-passed-to-agents',
    };
    expect(new Set(knownSecrets({ config: configSchema.parse({}), env }))).toEqual(
      new Set([
        'sk-ant-api-key-value',
        'anthropic-auth-token',
        'codex-api-key-value',
        'gemini-api-key-value',
        'copilot-provider-key',
        'ghp_gh-token-value',
        'aws-secret-access-key',
        'proxy%2Fpassword',
        'proxy/password',
      ]),
    );
  });

  it('takes every passEnv name, and the secret-named variables a passEnv prefix passes', () => {
    const config = configSchema.parse({
      backends: { claude: { passEnv: ['CORP_GATEWAY'] } },
      agents: { alice: { passEnv: ['TEAM_*'] } },
    });
    const env = {
      CORP_GATEWAY: 'corp-gateway-credential',
      TEAM_TOKEN: 'team-token-value',
      TEAM_REGION: 'somewhere-far',
    };
    expect(knownSecrets({ config, env }).sort()).toEqual(['corp-gateway-credential', 'team-token-value']);
  });

  it('takes the env_key variables of codex providers as keys, whatever their name', async () => {
    const home = await mkdtemp(join(tmpdir(), 'musubi-codex-home-'));
    try {
      await writeFile(join(home, 'config.toml'), '[model_providers.corp]\nenv_key = "CORP_LLM"\n');
      const env = { CODEX_HOME: home, CORP_LLM: 'corp-llm-credential' };
      expect(knownSecrets({ config: configSchema.parse({}), env })).toContain('corp-llm-credential');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('takes the tokens of musubi.yaml: the HTTP token, secret-named agent env, store credentials', () => {
    const config = configSchema.parse({
      store: 'nats://musubi:nats-password@127.0.0.1:4222?prefix=team',
      gateways: { http: { token: 'http-dashboard-token-1234' } },
      agents: { alice: { env: { GH_TOKEN: 'agent-gh-token-value', MODE: 'fast-and-loose' } } },
      backends: { codex: { env: { OPENAI_BASE_URL: 'https://gw.corp/v1?api_key=gateway-key-123' } } },
    });
    expect(knownSecrets({ config, env: {} }).sort()).toEqual(
      ['agent-gh-token-value', 'gateway-key-123', 'http-dashboard-token-1234', 'nats-password'].sort(),
    );
    const token = configSchema.parse({ store: 'nats://s3cr3t-nats-token@127.0.0.1:4222' });
    expect(knownSecrets({ config: token, env: {} })).toEqual(['s3cr3t-nats-token']);
  });
});
