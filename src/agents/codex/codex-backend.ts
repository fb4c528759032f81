import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { CodexOutputParser } from './codex-output.js';

function codexArgs(turn: CliTurn): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check', '-C', turn.cwd];
  if (turn.model !== undefined) args.push('-m', turn.model);
  const mode = turn.settings.permissionMode;
  if (mode === 'bypass') args.push('--dangerously-bypass-approvals-and-sandbox');
  else {
    args.push('-s', turn.settings.sandbox ?? 'workspace-write');
    if (mode === 'auto') args.push('--approve-for-me');
  }
  if (turn.sessionId !== undefined) args.push('resume', turn.sessionId);
  // `-` reads the prompt from stdin: no argument-length limit, no flag-looking prompts.
  args.push('-');
  return args;
}

/**
 * Codex: `codex exec --json --skip-git-repo-check -C <cwd> -s <sandbox> [resume <id>] -` with the
 * prompt on stdin. The session id is the `thread_id` of `thread.started`. Codex has no system prompt
 * flag, so a system prompt goes in front of the prompt. It retries forever without network: callers
 * must always give a timeout (AgentRunInput requires one).
 */
export const codexBackend: CliBackend = {
  name: 'codex',
  command: 'codex',
  authEnv: [
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'OPENAI_ORG_ID',
    'OPENAI_PROJECT_ID',
    'CODEX_HOME',
    'AZURE_OPENAI_API_KEY',
  ],
  buildInvocation: (turn) => ({ args: codexArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: () => new CodexOutputParser(),
};
