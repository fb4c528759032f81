import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

// Being written in this session by the codex helper.
/** Points codex at a model endpoint. */
export const wireCodex: WireCli = ({ url, apiKey }) => ({ env: { MUSUBI_ENDPOINT_URL: url, MUSUBI_ENDPOINT_KEY: apiKey ?? LOCAL_API_KEY }, files: [] });
