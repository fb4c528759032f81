import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { GeminiOutputParser } from './gemini-output.js';

function geminiArgs(turn: CliTurn): string[] {
  // `-p` makes the run headless; gemini appends its value to stdin, so the prompt itself goes on stdin
  // (no argument-length limit) and `-p` stays empty.
  const args = ['-p', '', '-o', 'json'];
  if (turn.model !== undefined) args.push('-m', turn.model);
  const mode = turn.settings.permissionMode ?? 'yolo';
  if (mode === 'yolo' || mode === 'bypass') args.push('--yolo');
  else args.push('--approval-mode', mode);
  // In a folder it does not trust, gemini silently falls back to the default approval mode.
  args.push('--skip-trust');
  if (turn.sessionId !== undefined) args.push('--resume', turn.sessionId);
  return args;
}

/**
 * Gemini CLI: `gemini -p '' -o json -m <model> --yolo --skip-trust [--resume <id>]` with the prompt on
 * stdin. `-o json` prints one (pretty-printed) object with `response`, `session_id`, `stats` or `error`.
 */
export const geminiBackend: CliBackend = {
  name: 'gemini',
  command: 'gemini',
  authEnv: ['GEMINI_API_KEY', 'GOOGLE_*', 'GEMINI_*'],
  buildInvocation: (turn) => ({ args: geminiArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: () => new GeminiOutputParser(),
};
