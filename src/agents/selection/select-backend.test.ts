import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/config.schema.js';
import { isMusubiError } from '../../core/errors.js';
import type { AgentBackend } from '../agent-runner.js';
import { selectBackend } from './select-backend.js';

const config = configSchema.parse({
  agents: {
    reviewer: { backend: 'codex', model: 'o4' },
    worker: { backend: 'gemini' },
    broken: { backend: 'gpt-9000' },
  },
});
const installed = (list: AgentBackend[]) => (b: AgentBackend) => list.includes(b);

describe('selectBackend', () => {
  it('uses YADON_<n>_BACKEND with that backend’s own worker-tier model', () => {
    const env = { LLM_BACKEND: 'claude', YADON_2_BACKEND: 'GEMINI' };
    expect(
      selectBackend({ agent: 'yadon-2', workerNumber: 2, config, env, isInstalled: installed([]) }),
    ).toEqual({
      backend: 'gemini',
      model: 'flash',
      source: 'env YADON_2_BACKEND',
    });
    expect(
      selectBackend({ agent: 'yadon-1', workerNumber: 1, config, env, isInstalled: installed([]) }),
    ).toMatchObject({
      backend: 'claude',
      model: 'haiku',
    });
  });

  it('applies LLM_BACKEND with the requested tier and ignores unknown values', () => {
    const env = { LLM_BACKEND: 'claude-opus' };
    expect(
      selectBackend({ agent: 'yadoran', tier: 'manager', config, env, isInstalled: installed([]) }),
    ).toMatchObject({ backend: 'claude', model: 'opus' });
    expect(
      selectBackend({
        agent: 'yadoran',
        tier: 'manager',
        config,
        env: { LLM_BACKEND: 'bogus' },
        isInstalled: installed(['claude']),
      }),
    ).toMatchObject({
      backend: 'claude',
      model: 'sonnet',
      source: 'default (first installed CLI)',
    });
    expect(
      selectBackend({
        agent: 'x',
        config,
        env: { LLM_BACKEND: 'scripted' },
        isInstalled: installed(['claude']),
      }),
    ).toEqual({ backend: 'scripted', source: 'env LLM_BACKEND' });
  });

  it('reads the agent, then its role, from config', () => {
    expect(selectBackend({ agent: 'reviewer', config, env: {}, isInstalled: installed([]) })).toEqual({
      backend: 'codex',
      model: 'o4',
      source: 'config agents.reviewer',
    });
    expect(
      selectBackend({ agent: 'ignitian_1', role: 'worker', config, env: {}, isInstalled: installed([]) }),
    ).toMatchObject({ backend: 'gemini', model: 'flash' });
  });

  it('runs an agent named after a backend on it, with its tier model, unless config names another', () => {
    const isInstalled = installed(['codex']);
    expect(selectBackend({ agent: 'claude', tier: 'manager', config, env: {}, isInstalled })).toEqual({
      backend: 'claude',
      model: 'sonnet',
      source: 'agent name claude',
    });
    const named = configSchema.parse({ agents: { scripted: { backend: 'gemini' } } });
    expect(selectBackend({ agent: 'scripted', config: named, env: {}, isInstalled })).toMatchObject({
      backend: 'gemini',
    });
  });

  it('falls back to the first installed CLI, else scripted', () => {
    expect(
      selectBackend({ agent: 'a', config, env: {}, isInstalled: installed(['opencode', 'codex']) }),
    ).toMatchObject({ backend: 'codex' });
    expect(selectBackend({ agent: 'a', config, env: {}, isInstalled: installed([]) })).toMatchObject({
      backend: 'scripted',
    });
  });

  it('rejects an unknown backend in config with AGENT_BACKEND_UNKNOWN', () => {
    let err: unknown;
    try {
      selectBackend({ agent: 'broken', config, env: {}, isInstalled: installed([]) });
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'AGENT_BACKEND_UNKNOWN')).toBe(true);
  });
});
