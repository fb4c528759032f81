import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

// Being written in this session by the copilot helper.
/** Points copilot at a model endpoint. */
export const wireCopilot: WireCli = ({ url, apiKey }) => ({ env: { MUSUBI_ENDPOINT_URL: url, MUSUBI_ENDPOINT_KEY: apiKey ?? LOCAL_API_KEY }, files: [] });
