import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { OpencodeOutputParser } from './opencode-output.js';

function opencodeArgs(turn: CliTurn): string[] {
  const args = ['run', '--format', 'json', '--dir', turn.cwd];
  if (turn.model !== undefined) args.push('-m', turn.model);
  if (turn.sessionId !== undefined) args.push('--session', turn.sessionId);
  if (turn.settings.permissionMode === 'bypass' || turn.settings.permissionMode === 'auto')
    args.push('--auto');
  return args;
}

/**
 * opencode 1.18: `opencode run --format json --dir <cwd> [-m provider/model] [--session id] [--auto]`
 * with the prompt (the system prompt in front, opencode has no flag for one) on stdin. No message
 * argument on purpose: `opencode run` wraps every argument holding a space in quotes (inner quotes
 * escaped) before the model sees it, while stdin alone arrives exactly and has no argument-size limit.
 *
 * `authEnv`: opencode's config and auth (`OPENCODE_CONFIG`, `OPENCODE_CONFIG_DIR`,
 * `OPENCODE_CONFIG_CONTENT`, `OPENCODE_AUTH_CONTENT` = the content of auth.json, `OPENCODE_API_KEY` for
 * OpenCode Zen, `OPENCODE_PERMISSION`), the switches that keep it offline or lean (`OPENCODE_DISABLE_*`,
 * `OPENCODE_MODELS_PATH`/`_URL`, `OPENCODE_PURE`, `OPENCODE_DB`), the keys of the providers it reads from
 * the environment (Anthropic, OpenAI, Google and Vertex, OpenRouter, Moonshot/Kimi, Z.ai, xAI, DeepSeek,
 * Groq, Mistral), and Amazon Bedrock (`AWS_*`) and Azure (`AZURE_*`) credentials. Not `OPENCODE`,
 * `OPENCODE_PID` (nested-run markers) nor `OPENCODE_CLIENT`/`OPENCODE_SERVER_*` (a parent opencode's).
 */
export const opencodeBackend: CliBackend = {
  name: 'opencode',
  command: 'opencode',
  authEnv: [
    'OPENCODE_CONFIG',
    'OPENCODE_CONFIG_DIR',
    'OPENCODE_CONFIG_CONTENT',
    'OPENCODE_AUTH_CONTENT',
    'OPENCODE_API_KEY',
    'OPENCODE_PERMISSION',
    'OPENCODE_DISABLE_*',
    'OPENCODE_MODELS_PATH',
    'OPENCODE_MODELS_URL',
    'OPENCODE_PURE',
    'OPENCODE_DB',
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'GOOGLE_GENERATIVE_AI_API_KEY',
    'GOOGLE_VERTEX_PROJECT',
    'GOOGLE_VERTEX_LOCATION',
    'GOOGLE_CLOUD_PROJECT',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'OPENROUTER_API_KEY',
    'MOONSHOT_API_KEY',
    'KIMI_API_KEY',
    'ZHIPU_API_KEY',
    'XAI_API_KEY',
    'DEEPSEEK_API_KEY',
    'GROQ_API_KEY',
    'MISTRAL_API_KEY',
    'AWS_*',
    'AZURE_*',
  ],
  buildInvocation: (turn) => ({ args: opencodeArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: () => new OpencodeOutputParser(),
};
