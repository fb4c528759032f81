import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { wireOpencode } from './opencode-wiring.js';

const configSchema = z.looseObject({
  provider: z.record(
    z.string(),
    z.looseObject({
      npm: z.string(),
      options: z.looseObject({ baseURL: z.string(), apiKey: z.string() }),
      models: z.record(z.string(), z.unknown()),
    }),
  ),
  model: z.string(),
  small_model: z.string(),
  enabled_providers: z.array(z.string()),
  autoupdate: z.literal(false),
  share: z.literal('disabled'),
});

describe('opencode wiring', () => {
  const wiring = wireOpencode({ url: 'http://127.0.0.1:4321/', configDir: '/cfg' });
  const file = (path: string) => wiring.files.find((f) => f.path === path)?.content ?? '';

  it('points OPENCODE_CONFIG at an openai-compatible provider on <url>/v1 and returns its model', () => {
    expect(wiring.env['OPENCODE_CONFIG']).toBe('/cfg/opencode.json');
    const config = configSchema.parse(JSON.parse(file('/cfg/opencode.json')));
    expect(config.provider['musubi']).toMatchObject({
      npm: '@ai-sdk/openai-compatible',
      options: { baseURL: 'http://127.0.0.1:4321/v1', apiKey: 'musubi-local' },
    });
    expect(Object.keys(config.provider['musubi']?.models ?? {})).toEqual(['musubi-model']);
    expect(config).toMatchObject({
      model: 'musubi/musubi-model',
      small_model: 'musubi/musubi-model',
      enabled_providers: ['musubi'],
    });
    expect(wiring.model).toBe('musubi/musubi-model');
  });

  it('keeps opencode state in configDir and switches off its remote calls', () => {
    expect(wiring.env).toMatchObject({
      XDG_CONFIG_HOME: '/cfg/config',
      XDG_DATA_HOME: '/cfg/data',
      XDG_STATE_HOME: '/cfg/state',
      XDG_CACHE_HOME: '/cfg/cache',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
    });
    expect(wiring.files.every((f) => f.path.startsWith('/cfg/'))).toBe(true);
    // The plugin dependency opencode would npm-install in its config folder is marked as installed.
    const lock = z
      .looseObject({
        packages: z.looseObject({ '': z.looseObject({ dependencies: z.record(z.string(), z.string()) }) }),
      })
      .parse(JSON.parse(file('/cfg/config/opencode/package-lock.json')));
    expect(Object.keys(lock.packages[''].dependencies)).toEqual(['@opencode-ai/plugin']);
    expect(wiring.files.some((f) => f.path.startsWith('/cfg/config/opencode/node_modules/'))).toBe(true);
  });

  it('sends the given key when one is passed', () => {
    const keyed = wireOpencode({ url: 'http://127.0.0.1:1', configDir: '/c', apiKey: 'sk-test' });
    expect(keyed.files[0]?.content).toContain('"apiKey": "sk-test"');
  });
});
