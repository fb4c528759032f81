import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { codexProviderEnvKeys } from './codex-config.js';
import { CodexOutputParser } from './codex-output.js';
import { CODEX_ENDPOINT_KEY_ENV } from './codex-wiring.js';

function codexArgs(turn: CliTurn): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check', '-C', turn.cwd];
  if (turn.model !== undefined) args.push('-m', turn.model);
  const mode = turn.settings.permissionMode;
  if (mode === 'bypass') args.push('--dangerously-bypass-approvals-and-sandbox');
  // `--approve-for-me` brings its own workspace-write sandbox; codex refuses it together with `-s`.
  else if (mode === 'auto') args.push('--approve-for-me');
  else args.push('-s', turn.settings.sandbox ?? 'workspace-write');
  // codex ignores OPENAI_BASE_URL; its built-in provider takes the base URL from `openai_base_url`.
  const baseUrl = turn.childEnv['OPENAI_BASE_URL'];
  if (baseUrl !== undefined && baseUrl !== '') args.push('-c', `openai_base_url=${JSON.stringify(baseUrl)}`);
  if (turn.sessionId !== undefined) args.push('resume', turn.sessionId);
  // `-` reads the prompt from stdin: no argument-length limit, no flag-looking prompts.
  args.push('-');
  return args;
}

/**
 * Codex 0.171: `codex exec --json --skip-git-repo-check -C <cwd> [-m <model>] <permissions> [-c
 * openai_base_url=…] [resume <id>] -` with the prompt on stdin. Permissions: `-s <sandbox>` (default
 * workspace-write); `permissionMode: auto` = `--approve-for-me` (approvals reviewed automatically inside
 * codex's workspace-write sandbox; `sandbox` does not apply); `bypass` =
 * `--dangerously-bypass-approvals-and-sandbox`. The session id is the `thread_id` of `thread.started`.
 * Codex has no system prompt flag, so a system prompt goes in front of the prompt. It retries without
 * network until its own timeouts: callers must always give a timeout (AgentRunInput requires one).
 *
 * Auth and endpoints it reads: `CODEX_API_KEY` (the API key `codex exec` uses for the built-in OpenAI
 * provider), `CODEX_ACCESS_TOKEN` (a ChatGPT access token), `OPENAI_API_KEY` (only where a provider names
 * it as `env_key`, or piped to `codex login --with-api-key`; `codex exec` does not read it itself),
 * `OPENAI_ORGANIZATION` / `OPENAI_PROJECT` (sent as headers), `OPENAI_IDENTITY_TOKEN_*` /
 * `OPENAI_FEDERATION_RULE_ID` (workload identity), `OPENAI_BASE_URL` (turned into `-c openai_base_url`),
 * `CODEX_HOME` / `CODEX_SQLITE_HOME` (config, auth.json, sessions), `CODEX_CA_CERTIFICATE` (a PEM bundle
 * for a TLS-intercepting proxy), `CODEX_OSS_BASE_URL` / `CODEX_OSS_PORT` (`--oss`), Amazon Bedrock's
 * `AWS_*` and Vertex AI's `GOOGLE_APPLICATION_CREDENTIALS` / `GOOGLE_CLOUD_PROJECT` /
 * `GOOGLE_CLOUD_LOCATION`, `AZURE_OPENAI_API_KEY` (the usual `env_key` of an Azure provider entry) and
 * `MUSUBI_ENDPOINT_KEY` (the `env_key` of musubi's endpoint wiring). Every other provider's `env_key` in
 * the user's `config.toml` is passed too (`codexProviderEnvKeys`, read at each turn).
 */
export const codexBackend: CliBackend = {
  name: 'codex',
  command: 'codex',
  authEnvFrom: codexProviderEnvKeys,
  authEnv: [
    'CODEX_API_KEY',
    'CODEX_ACCESS_TOKEN',
    'OPENAI_API_KEY',
    'OPENAI_ORGANIZATION',
    'OPENAI_PROJECT',
    'OPENAI_IDENTITY_TOKEN_*',
    'OPENAI_FEDERATION_RULE_ID',
    'OPENAI_BASE_URL',
    'CODEX_HOME',
    'CODEX_SQLITE_HOME',
    'CODEX_CA_CERTIFICATE',
    'CODEX_OSS_BASE_URL',
    'CODEX_OSS_PORT',
    'AWS_*',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'GOOGLE_CLOUD_PROJECT',
    'GOOGLE_CLOUD_LOCATION',
    'AZURE_OPENAI_API_KEY',
    CODEX_ENDPOINT_KEY_ENV,
  ],
  buildInvocation: (turn) => ({ args: codexArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: (context) => new CodexOutputParser(context),
};
