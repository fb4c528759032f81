import { join } from 'node:path';
import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

/**
 * Points Claude Code (2.1.197) at a model endpoint: `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` (sent
 * as `x-api-key`; `-p` uses an env key without the interactive approval), its state in `configDir`
 * (`CLAUDE_CONFIG_DIR`), and every remote call it can skip switched off: telemetry, error reports,
 * feature flags (GrowthBook), auto-update and other non-essential traffic. `.claude.json` marks the
 * onboarding done and the key approved, so an interactive `claude` with the same env asks nothing either.
 */
export const wireClaude: WireCli = ({ url, configDir, apiKey }) => {
  const key = apiKey ?? LOCAL_API_KEY;
  const state = {
    hasCompletedOnboarding: true,
    // claude remembers an approved key by its last 20 characters.
    customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
  };
  return {
    env: {
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: key,
      CLAUDE_CONFIG_DIR: configDir,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_GROWTHBOOK: '1',
      DISABLE_INSTALLATION_CHECKS: '1',
    },
    files: [{ path: join(configDir, '.claude.json'), content: `${JSON.stringify(state, null, 2)}\n` }],
  };
};
