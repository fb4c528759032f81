import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { ClaudeOutputParser } from './claude-output.js';

/** `permissionMode` value that maps to `--dangerously-skip-permissions` (the default for headless turns). */
export const BYPASS_PERMISSIONS = 'bypass';

function claudeArgs(turn: CliTurn): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (turn.model !== undefined) args.push('--model', turn.model);
  if (turn.sessionId !== undefined) args.push('--resume', turn.sessionId);
  if (turn.systemPrompt !== undefined && turn.systemPrompt !== '') {
    args.push('--append-system-prompt', turn.systemPrompt);
  }
  const mode = turn.settings.permissionMode ?? BYPASS_PERMISSIONS;
  if (mode === BYPASS_PERMISSIONS) args.push('--dangerously-skip-permissions');
  else args.push('--permission-mode', mode);
  if (turn.settings.maxTurns !== undefined) args.push('--max-turns', String(turn.settings.maxTurns));
  if (turn.settings.maxBudgetUsd !== undefined)
    args.push('--max-budget-usd', String(turn.settings.maxBudgetUsd));
  return args;
}

/**
 * Claude Code: `claude -p --output-format stream-json --verbose` with the prompt on stdin (no
 * argument-length limit). stream-json needs `--verbose` with `-p`. Success is decided by the result's
 * `is_error`, never by `subtype` (a logged-out CLI reports `subtype: success` with `is_error: true`).
 */
export const claudeBackend: CliBackend = {
  name: 'claude',
  command: 'claude',
  authEnv: [
    'ANTHROPIC_*',
    'CLAUDE_CONFIG_DIR',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
    'AWS_*',
    'CLOUD_ML_REGION',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'VERTEX_REGION_*',
  ],
  buildInvocation: (turn) => ({ args: claudeArgs(turn), stdin: turn.prompt }),
  createParser: () => new ClaudeOutputParser(),
};
