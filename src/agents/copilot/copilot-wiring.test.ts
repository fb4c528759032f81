import { describe, expect, it } from 'vitest';
import { copilotBackend } from './copilot-backend.js';
import { COPILOT_ENDPOINT_MODEL, wireCopilot } from './copilot-wiring.js';

describe('copilot wiring', () => {
  it('points BYOK at <url>/v1 on the Chat Completions wire, offline, with its state in configDir', () => {
    const wiring = wireCopilot({ url: 'http://127.0.0.1:4000/', configDir: '/tmp/c' });
    expect(wiring).toEqual({
      env: {
        COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:4000/v1',
        COPILOT_PROVIDER_TYPE: 'openai',
        COPILOT_PROVIDER_WIRE_API: 'completions',
        COPILOT_PROVIDER_API_KEY: 'musubi-local',
        COPILOT_MODEL: COPILOT_ENDPOINT_MODEL,
        COPILOT_OFFLINE: 'true',
        COPILOT_AUTO_UPDATE: 'false',
        COPILOT_HOME: '/tmp/c',
      },
      files: [],
      model: COPILOT_ENDPOINT_MODEL,
    });
  });

  it('sends the given key when one is passed', () => {
    expect(
      wireCopilot({ url: 'http://127.0.0.1:1', configDir: '/c', apiKey: 'k' }).env[
        'COPILOT_PROVIDER_API_KEY'
      ],
    ).toBe('k');
  });

  it('sets only variables the backend would also inherit from a parent environment', () => {
    const names = Object.keys(wireCopilot({ url: 'http://127.0.0.1:1', configDir: '/c' }).env);
    const inherited = (name: string) =>
      copilotBackend.authEnv.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));
    expect(names.filter((n) => !inherited(n))).toEqual([]);
  });
});
