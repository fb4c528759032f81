import { join } from 'node:path';
import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { CopilotOutputParser } from './copilot-output.js';
import { copilotHome } from './copilot-usage.js';

/** The file in the turn's scratch folder that copilot writes its usage statistics to. */
export const USAGE_FILE_NAME = 'usage.json';

function usageFile(turn: CliTurn): string {
  return join(turn.scratchDir, USAGE_FILE_NAME);
}

function copilotArgs(turn: CliTurn): string[] {
  // No `-p`: with stdin not a terminal, copilot 1.0.102 reads the prompt from it and runs
  // non-interactively, so the prompt has no argument-size limit and cannot be mistaken for a flag.
  // `--allow-all-tools` is required for non-interactive runs.
  const args = [
    '--output-format',
    'json',
    '--allow-all-tools',
    '--no-ask-user',
    '--no-auto-update',
    '--disable-client-telemetry',
    '--usage-output-file',
    usageFile(turn),
  ];
  if (turn.model !== undefined) args.push('--model', turn.model);
  // Last: `--resume` takes an optional value.
  if (turn.sessionId !== undefined) args.push('--resume', turn.sessionId);
  return args;
}

/**
 * GitHub Copilot CLI 1.0.102: `copilot --output-format json --allow-all-tools --no-ask-user
 * --no-auto-update --disable-client-telemetry --usage-output-file <scratch>/usage.json [--model m]
 * [--resume id]` with the prompt on stdin (piped stdin is its non-interactive prompt mode, like `-p`).
 *
 * Auth: a GitHub token (`COPILOT_GITHUB_TOKEN` > `GH_TOKEN` > `GITHUB_TOKEN`, or the enterprise
 * tokens, for `GH_HOST`/`COPILOT_GH_HOST`), or bring-your-own-key with no GitHub account at all:
 * `COPILOT_PROVIDER_BASE_URL` + `COPILOT_PROVIDER_TYPE` (openai|azure|anthropic) + `COPILOT_PROVIDER_API_KEY`
 * (or `_BEARER_TOKEN` / `_API_KEY_COMMAND`) + `COPILOT_MODEL`; Azure Entra credentials (`AZURE_*`,
 * managed identity `IDENTITY_*`) for type azure. `COPILOT_OFFLINE=true` turns off every GitHub call.
 * Proxies and CA files come from the base allowlist.
 */
export const copilotBackend: CliBackend = {
  name: 'copilot',
  command: 'copilot',
  authEnv: [
    // GitHub auth, in copilot's order of precedence, and the enterprise variants.
    'COPILOT_GITHUB_TOKEN',
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'GH_ENTERPRISE_TOKEN',
    'GITHUB_ENTERPRISE_TOKEN',
    'GH_HOST',
    'COPILOT_GH_HOST',
    'GH_CONFIG_DIR',
    'GITHUB_SERVER_URL',
    'COPILOT_API_URL',
    // Bring your own key: every COPILOT_PROVIDER_* setting (base URL, type, keys, wire API, headers…).
    'COPILOT_PROVIDER_*',
    'COPILOT_MODEL',
    'COPILOT_OFFLINE',
    'COPILOT_AUTO_UPDATE',
    'COPILOT_ALLOW_ALL',
    // Where it keeps state and unpacks itself.
    'COPILOT_HOME',
    'COPILOT_CACHE_HOME',
    'COPILOT_PKG_CACHE_HOME',
    // Azure provider with Entra ID instead of a key (service principal, workload or managed identity).
    'AZURE_TENANT_ID',
    'AZURE_CLIENT_ID',
    'AZURE_CLIENT_SECRET',
    'AZURE_FEDERATED_TOKEN_FILE',
    'AZURE_TOKEN_CREDENTIALS',
    'IDENTITY_ENDPOINT',
    'IDENTITY_HEADER',
  ],
  buildInvocation: (turn) => ({ args: copilotArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: ({ turn, memory }) => {
    const home = copilotHome(turn.childEnv);
    return new CopilotOutputParser({
      usageFile: usageFile(turn),
      memory,
      ...(home !== undefined && { copilotHome: home }),
      ...(turn.sessionId !== undefined && { resumedSessionId: turn.sessionId }),
    });
  },
};
