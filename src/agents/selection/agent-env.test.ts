import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/config.schema.js';
import { agentEnvOf } from './agent-env.js';

describe('agent environment settings', () => {
  it('joins the backend defaults with the agent entry, the entry winning on env values', () => {
    const config = configSchema.parse({
      backends: {
        claude: { passEnv: ['AWS_*', 'IS_SANDBOX'], env: { CLAUDE_CODE_USE_BEDROCK: '1', A: 'backend' } },
      },
      agents: { reviewer: { backend: 'claude', passEnv: ['IS_SANDBOX', 'MY_TOKEN'], env: { A: 'agent' } } },
    });
    expect(agentEnvOf(config, 'claude', config.agents['reviewer'])).toEqual({
      passEnv: ['AWS_*', 'IS_SANDBOX', 'MY_TOKEN'],
      extraEnv: { CLAUDE_CODE_USE_BEDROCK: '1', A: 'agent' },
    });
    expect(agentEnvOf(config, 'claude', undefined)).toEqual({
      passEnv: ['AWS_*', 'IS_SANDBOX'],
      extraEnv: { CLAUDE_CODE_USE_BEDROCK: '1', A: 'backend' },
    });
    expect(agentEnvOf(config, 'codex', undefined)).toEqual({});
  });

  it('rejects passEnv entries that are not names or prefixes, and unknown backends', () => {
    const bad = configSchema.safeParse({ agents: { a: { passEnv: ['KEY=secret'] } } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toContain('NAME or PREFIX_*');
    expect(configSchema.safeParse({ backends: { clippy: { passEnv: ['X'] } } }).success).toBe(false);
    expect(configSchema.safeParse({ agents: { a: { env: { 'BAD NAME': 'x' } } } }).success).toBe(false);
  });
});
