import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { promptArgument, withSystemPrompt } from '../cli/cli-backend.js';
import { OpencodeOutputParser } from './opencode-output.js';

function opencodeArgs(turn: CliTurn): string[] {
  const args = ['run', '--format', 'json', '--dir', turn.cwd];
  if (turn.model !== undefined) args.push('-m', turn.model);
  if (turn.sessionId !== undefined) args.push('--session', turn.sessionId);
  if (turn.settings.permissionMode === 'bypass' || turn.settings.permissionMode === 'auto')
    args.push('--auto');
  args.push(promptArgument(withSystemPrompt(turn)));
  return args;
}

/**
 * opencode: `opencode run --format json --dir <cwd> [-m provider/model] [--session id] <prompt>`. The
 * prompt is the message argument (limited to the OS argument size).
 */
export const opencodeBackend: CliBackend = {
  name: 'opencode',
  command: 'opencode',
  authEnv: [
    'OPENCODE_CONFIG',
    'OPENCODE_CONFIG_DIR',
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'GEMINI_API_KEY',
    'OPENROUTER_API_KEY',
    'MOONSHOT_API_KEY',
    'GROQ_API_KEY',
    'DEEPSEEK_API_KEY',
  ],
  buildInvocation: (turn) => ({ args: opencodeArgs(turn) }),
  createParser: () => new OpencodeOutputParser(),
};
