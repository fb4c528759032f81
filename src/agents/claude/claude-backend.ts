import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { ClaudeOutputParser } from './claude-output.js';

/** `permissionMode` value that maps to `--dangerously-skip-permissions` (the default for headless turns). */
export const BYPASS_PERMISSIONS = 'bypass';
/** What root turns use instead of the bypass: file edits are allowed, shell commands are refused. */
const ROOT_PERMISSION_MODE = 'acceptEdits';

/**
 * Whether a turn must not get `--dangerously-skip-permissions`: claude exits 1 with
 * "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" when
 * it runs as root, unless `IS_SANDBOX=1` says the container is the sandbox.
 */
function losesBypass(
  isRoot: boolean,
  env: Readonly<Record<string, string | undefined>>,
  mode: string,
): boolean {
  return isRoot && mode === BYPASS_PERMISSIONS && env['IS_SANDBOX'] !== '1';
}

/**
 * The start-up notice for claude turns that run as root with the default (bypass) permission mode and
 * without `IS_SANDBOX=1`: they use `--permission-mode acceptEdits` instead. Undefined when nothing changes.
 */
export function claudeRootNotice(
  isRoot: boolean,
  env: Readonly<Record<string, string | undefined>>,
  permissionMode: string | undefined,
): string | undefined {
  if (!losesBypass(isRoot, env, permissionMode ?? BYPASS_PERMISSIONS)) return undefined;
  return (
    'running as root: claude uses --permission-mode acceptEdits (file edits only, shell commands are refused); ' +
    'set IS_SANDBOX=1 in a container to allow --dangerously-skip-permissions, or run claude as another user (runAs)'
  );
}

/**
 * The permission flags of a claude run: `--dangerously-skip-permissions` for the default bypass mode,
 * `--permission-mode acceptEdits` instead where claude would refuse the bypass (root without
 * `IS_SANDBOX=1`), else `--permission-mode <mode>`. Shared by headless turns and the yadon coordinator.
 */
export function claudePermissionArgs(
  isRoot: boolean,
  env: Readonly<Record<string, string | undefined>>,
  permissionMode: string | undefined,
): string[] {
  const mode = permissionMode ?? BYPASS_PERMISSIONS;
  if (losesBypass(isRoot, env, mode)) return ['--permission-mode', ROOT_PERMISSION_MODE];
  return mode === BYPASS_PERMISSIONS ? ['--dangerously-skip-permissions'] : ['--permission-mode', mode];
}

function permissionArgs(turn: CliTurn): string[] {
  return claudePermissionArgs(turn.isRoot, turn.childEnv, turn.settings.permissionMode);
}

function claudeArgs(turn: CliTurn): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (turn.model !== undefined) args.push('--model', turn.model);
  if (turn.sessionId !== undefined) args.push('--resume', turn.sessionId);
  if (turn.systemPrompt !== undefined && turn.systemPrompt !== '') {
    args.push('--append-system-prompt', turn.systemPrompt);
  }
  args.push(...permissionArgs(turn));
  if (turn.settings.maxTurns !== undefined) args.push('--max-turns', String(turn.settings.maxTurns));
  if (turn.settings.maxBudgetUsd !== undefined)
    args.push('--max-budget-usd', String(turn.settings.maxBudgetUsd));
  return args;
}

/**
 * Claude Code (2.1.197): `claude -p --output-format stream-json --verbose` with the prompt on stdin (no
 * argument-length limit). stream-json needs `--verbose` with `-p`. Success is decided by the result's
 * `is_error`, never by `subtype` (a logged-out CLI reports `subtype: success` with `is_error: true`).
 * The default permission mode is `--dangerously-skip-permissions`; as root without `IS_SANDBOX=1`
 * (which claude refuses) it is `--permission-mode acceptEdits` (see {@link claudeRootNotice}).
 *
 * Inherited for auth and endpoints: `ANTHROPIC_*` (API key, auth token, base URL, custom headers, model
 * overrides, Bedrock/Vertex/Foundry base URLs and keys), `CLAUDE_CODE_OAUTH_TOKEN` (from `claude
 * setup-token`), the provider switches `CLAUDE_CODE_USE_BEDROCK|VERTEX|FOUNDRY|MANTLE|ANTHROPIC_AWS|GATEWAY`
 * and their `CLAUDE_CODE_SKIP_*_AUTH`, the cloud credentials they read (`AWS_*`, Google
 * `GOOGLE_*`/`CLOUD_ML_REGION`/`VERTEX_REGION_*`/`CLOUDSDK_CONFIG`, Azure `AZURE_*`), claude's own proxy
 * and mTLS variables, `CLAUDE_CONFIG_DIR`, and `IS_SANDBOX`.
 */
export const claudeBackend: CliBackend = {
  name: 'claude',
  command: 'claude',
  authEnv: [
    'ANTHROPIC_*',
    'CLAUDE_CONFIG_DIR',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_REFRESH_TOKEN',
    'CLAUDE_CODE_OAUTH_SCOPES',
    'CLAUDE_CODE_API_BASE_URL',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
    'CLAUDE_CODE_USE_FOUNDRY',
    'CLAUDE_CODE_USE_MANTLE',
    'CLAUDE_CODE_USE_ANTHROPIC_AWS',
    'CLAUDE_CODE_USE_GATEWAY',
    'CLAUDE_CODE_SKIP_BEDROCK_AUTH',
    'CLAUDE_CODE_SKIP_VERTEX_AUTH',
    'CLAUDE_CODE_SKIP_FOUNDRY_AUTH',
    'CLAUDE_CODE_SKIP_MANTLE_AUTH',
    'CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH',
    'CLAUDE_CODE_HTTP_PROXY',
    'CLAUDE_CODE_HTTPS_PROXY',
    'CLAUDE_CODE_CLIENT_CERT',
    'CLAUDE_CODE_CLIENT_KEY',
    'CLAUDE_CODE_CLIENT_KEY_PASSPHRASE',
    'CLAUDE_CODE_CERT_STORE',
    'NODE_USE_SYSTEM_CA',
    'AWS_*',
    'CLOUD_ML_REGION',
    'VERTEX_REGION_*',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'GOOGLE_CLOUD_PROJECT',
    'GOOGLE_CLOUD_QUOTA_PROJECT',
    'GCLOUD_PROJECT',
    'CLOUDSDK_CONFIG',
    'AZURE_*',
    'IS_SANDBOX',
  ],
  buildInvocation: (turn) => ({ args: claudeArgs(turn), stdin: turn.prompt }),
  createParser: () => new ClaudeOutputParser(),
};
