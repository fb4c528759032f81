import { join } from 'node:path';
import type { WireCli } from '../model-endpoint/endpoint-wiring.js';
import { LOCAL_API_KEY } from '../model-endpoint/endpoint-wiring.js';

/** The provider id the wiring adds to opencode's config. */
export const OPENCODE_ENDPOINT_PROVIDER = 'musubi';
/** The one model of that provider; the endpoint serves any name. */
export const OPENCODE_ENDPOINT_MODEL = 'musubi-model';
/** The opencode version whose plugin package the wiring marks as installed (scripts/agent-clis.json). */
const OPENCODE_VERSION = '1.18.33';

/** opencode's config for an endpoint run: one OpenAI-compatible provider, and no remote extras. */
export function opencodeEndpointConfig(url: string, apiKey: string): Record<string, unknown> {
  const model = `${OPENCODE_ENDPOINT_PROVIDER}/${OPENCODE_ENDPOINT_MODEL}`;
  return {
    provider: {
      [OPENCODE_ENDPOINT_PROVIDER]: {
        // Bundled in the opencode binary: nothing is downloaded for it.
        npm: '@ai-sdk/openai-compatible',
        name: 'musubi model endpoint',
        options: { baseURL: `${url.replace(/\/+$/, '')}/v1`, apiKey },
        models: {
          [OPENCODE_ENDPOINT_MODEL]: {
            name: OPENCODE_ENDPOINT_MODEL,
            tool_call: true,
            limit: { context: 200_000, output: 32_000 },
          },
        },
      },
    },
    // Only this provider: keys of other providers in the environment are not picked up.
    enabled_providers: [OPENCODE_ENDPOINT_PROVIDER],
    model,
    // Title generation and summaries go to the same endpoint.
    small_model: model,
    autoupdate: false,
    share: 'disabled',
    // No language-server or formatter downloads.
    lsp: false,
    formatter: false,
    // `opencode run` has nobody to ask: edits and commands inside the project go ahead.
    permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
  };
}

/**
 * Points opencode 1.18 at a model endpoint: `OPENCODE_CONFIG` names a config with one
 * `@ai-sdk/openai-compatible` provider (`baseURL` = url + `/v1`, so it speaks Chat Completions) and
 * returns its model for `-m`. opencode has no single home variable, so its XDG folders (config, data with
 * the session database, state, cache) are moved into `configDir`; resuming a session needs the same
 * `configDir`. Remote calls switched off: the models.dev catalogue refresh (`OPENCODE_DISABLE_MODELS_FETCH`;
 * the catalogue bundled in the binary is used), auto-update, sharing, LSP downloads. opencode also runs an
 * npm install of `@opencode-ai/plugin` in every config folder that has no `node_modules` or whose
 * package-lock lacks it; the wiring writes that folder's package.json and lock so nothing is fetched.
 */
export const wireOpencode: WireCli = ({ url, configDir, apiKey }) => {
  const configFile = join(configDir, 'opencode.json');
  const xdgConfig = join(configDir, 'config');
  const globalConfig = join(xdgConfig, 'opencode');
  const plugin = { '@opencode-ai/plugin': OPENCODE_VERSION };
  const lock = {
    name: 'opencode',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { dependencies: plugin } },
  };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return {
    env: {
      OPENCODE_CONFIG: configFile,
      XDG_CONFIG_HOME: xdgConfig,
      XDG_DATA_HOME: join(configDir, 'data'),
      XDG_STATE_HOME: join(configDir, 'state'),
      XDG_CACHE_HOME: join(configDir, 'cache'),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    },
    files: [
      { path: configFile, content: json(opencodeEndpointConfig(url, apiKey ?? LOCAL_API_KEY)) },
      { path: join(globalConfig, 'package.json'), content: json({ dependencies: plugin }) },
      { path: join(globalConfig, 'package-lock.json'), content: json(lock) },
      // The folder must exist for opencode to trust the lock; a file is how a wiring makes one.
      {
        path: join(globalConfig, 'node_modules', '.musubi'),
        content: 'marks the plugin dependency as installed\n',
      },
    ],
    model: `${OPENCODE_ENDPOINT_PROVIDER}/${OPENCODE_ENDPOINT_MODEL}`,
  };
};
