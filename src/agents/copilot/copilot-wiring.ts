import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

/**
 * The model copilot is told to use. BYOK needs one; a name in copilot's built-in catalog gives it the
 * model's token limits and tool support (an unknown name works too, with safe defaults). The endpoint
 * answers any name.
 */
export const COPILOT_ENDPOINT_MODEL = 'gpt-5.2';

/**
 * Points GitHub Copilot CLI (1.0.102) at a model endpoint through its bring-your-own-key mode, which
 * needs no GitHub account: an OpenAI-compatible provider (`COPILOT_PROVIDER_TYPE=openai`) on the Chat
 * Completions wire (`POST <base>/chat/completions`, streamed; its default wire and the one every
 * OpenAI-compatible server speaks), the key sent as `Authorization: Bearer`. `COPILOT_OFFLINE=true`
 * skips every GitHub call (auth, telemetry, policy fetch, GitHub MCP server, web tools, update checks),
 * `COPILOT_AUTO_UPDATE=false` keeps the bundled version, and its config and sessions go to `configDir`
 * (`COPILOT_HOME`). No files are needed.
 */
export const wireCopilot: WireCli = ({ url, configDir, apiKey }) => ({
  env: {
    COPILOT_PROVIDER_BASE_URL: `${url.replace(/\/+$/, '')}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_WIRE_API: 'completions',
    COPILOT_PROVIDER_API_KEY: apiKey ?? LOCAL_API_KEY,
    COPILOT_MODEL: COPILOT_ENDPOINT_MODEL,
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_HOME: configDir,
  },
  files: [],
  model: COPILOT_ENDPOINT_MODEL,
});
