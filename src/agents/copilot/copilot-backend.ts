import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { promptArgument, withSystemPrompt } from '../cli/cli-backend.js';
import { CopilotOutputParser } from './copilot-output.js';

function copilotArgs(turn: CliTurn): string[] {
  // copilot reads the prompt only from `-p`; `--allow-all-tools` is required for non-interactive runs.
  const args = [
    '-p',
    promptArgument(withSystemPrompt(turn)),
    '--output-format',
    'json',
    '--allow-all-tools',
    '--no-ask-user',
  ];
  if (turn.model !== undefined) args.push('--model', turn.model);
  if (turn.sessionId !== undefined) args.push('--resume', turn.sessionId);
  return args;
}

/**
 * GitHub Copilot CLI: `copilot -p <prompt> --output-format json --allow-all-tools --no-ask-user
 * [--model m] [--resume id]`. The prompt is an argument, so it is limited to the OS argument size
 * (128 KiB per argument on Linux).
 */
export const copilotBackend: CliBackend = {
  name: 'copilot',
  command: 'copilot',
  authEnv: ['GITHUB_TOKEN', 'GH_TOKEN', 'COPILOT_*', 'GH_HOST', 'GITHUB_*'],
  buildInvocation: (turn) => ({ args: copilotArgs(turn) }),
  createParser: () => new CopilotOutputParser(),
};
