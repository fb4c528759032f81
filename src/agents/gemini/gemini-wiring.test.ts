import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { wireGemini } from './gemini-wiring.js';

describe('wireGemini', () => {
  it('points gemini at the endpoint with an API key and a settings file in its own home', () => {
    const wiring = wireGemini({ url: 'http://127.0.0.1:4567', configDir: '/cfg' });
    expect(wiring.env).toEqual({
      GEMINI_API_KEY: 'musubi-local',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:4567',
      GEMINI_CLI_HOME: '/cfg',
    });
    expect(wiring.files.map((f) => f.path)).toEqual(['/cfg/.gemini/settings.json']);
    const settings = z
      .object({
        security: z.object({ auth: z.object({ selectedType: z.string() }) }),
        privacy: z.object({ usageStatisticsEnabled: z.boolean() }),
        telemetry: z.object({ enabled: z.boolean() }),
        general: z.object({ enableAutoUpdate: z.boolean(), enableAutoUpdateNotification: z.boolean() }),
      })
      .parse(JSON.parse(wiring.files[0]?.content ?? '{}'));
    expect(settings.security.auth.selectedType).toBe('gemini-api-key');
    expect([
      settings.privacy.usageStatisticsEnabled,
      settings.telemetry.enabled,
      settings.general.enableAutoUpdate,
    ]).toEqual([false, false, false]);
  });

  it('sends the key the caller gives', () => {
    expect(
      wireGemini({ url: 'http://127.0.0.1:1', configDir: '/c', apiKey: 'k2' }).env['GEMINI_API_KEY'],
    ).toBe('k2');
  });
});
