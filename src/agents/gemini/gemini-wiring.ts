import { join } from 'node:path';
import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

/**
 * gemini's user settings for an endpoint run: API-key auth (no OAuth or Vertex probing), and every
 * remote call it can switch off: usage statistics (Clearcut), telemetry, the npm update check, the IDE
 * companion and the release-notes / banner fetches.
 */
export const GEMINI_ENDPOINT_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ide: { enabled: false },
} as const;

/**
 * Points gemini 0.61 at a model endpoint: `GOOGLE_GEMINI_BASE_URL` (the base of `/v1beta/models/…`),
 * `GEMINI_API_KEY`, and `GEMINI_CLI_HOME` = `configDir`, which gemini uses instead of the home folder
 * for `.gemini/` (settings, sessions, history), so `.gemini/settings.json` there selects API-key auth.
 */
export const wireGemini: WireCli = ({ url, configDir, apiKey }) => ({
  env: {
    GEMINI_API_KEY: apiKey ?? LOCAL_API_KEY,
    GOOGLE_GEMINI_BASE_URL: url,
    GEMINI_CLI_HOME: configDir,
  },
  files: [
    {
      path: join(configDir, '.gemini', 'settings.json'),
      content: `${JSON.stringify(GEMINI_ENDPOINT_SETTINGS, null, 2)}\n`,
    },
  ],
});
