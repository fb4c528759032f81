import type { CliBackend, CliTurn } from '../cli/cli-backend.js';
import { withSystemPrompt } from '../cli/cli-backend.js';
import { GeminiOutputParser } from './gemini-output.js';

function geminiArgs(turn: CliTurn): string[] {
  // `-p` makes the run headless; gemini appends its value to stdin, so the prompt itself goes on stdin
  // (no argument-length limit) and `-p` stays empty.
  const args = ['-p', '', '-o', 'stream-json'];
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
 * What gemini 0.61 reads for auth, endpoints and its config folder (grepped from its bundle): the Gemini
 * API key or Vertex AI (`GOOGLE_GENAI_USE_VERTEXAI` + project/location, or `GOOGLE_API_KEY` for Vertex
 * express), Code Assist (`GOOGLE_GENAI_USE_GCA`, optionally with `GOOGLE_CLOUD_ACCESS_TOKEN`),
 * Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's `CLOUDSDK_CONFIG`, the
 * compute metadata server with `GEMINI_CLI_USE_COMPUTE_ADC`), the default auth type, custom API base URLs
 * and headers (a proxy or musubi's model endpoint), and `GEMINI_CLI_HOME` (the folder holding `.gemini/`
 * instead of HOME), with the system settings paths. Not `SANDBOX` (gemini's own marker that it already
 * runs inside its sandbox) nor other `GEMINI_*` switches (system prompt file, telemetry), which
 * `passEnv` can add.
 */
const GEMINI_AUTH_ENV = [
  'GEMINI_API_KEY',
  'GEMINI_API_KEY_AUTH_MECHANISM',
  'GEMINI_DEFAULT_AUTH_TYPE',
  'GOOGLE_API_KEY',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_GENAI_USE_GCA',
  'GOOGLE_GENAI_API_VERSION',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_PROJECT_ID',
  'GOOGLE_CLOUD_LOCATION',
  'GOOGLE_CLOUD_QUOTA_PROJECT',
  'GOOGLE_CLOUD_UNIVERSE_DOMAIN',
  'GOOGLE_CLOUD_ACCESS_TOKEN',
  'GCLOUD_PROJECT',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'CLOUDSDK_CONFIG',
  'GEMINI_CLI_USE_COMPUTE_ADC',
  'GOOGLE_GEMINI_BASE_URL',
  'GOOGLE_VERTEX_BASE_URL',
  'CODE_ASSIST_ENDPOINT',
  'CODE_ASSIST_API_VERSION',
  'GEMINI_CLI_CUSTOM_HEADERS',
  'GEMINI_CLI_HOME',
  'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
  'GEMINI_CLI_SYSTEM_DEFAULTS_PATH',
  'GEMINI_FORCE_FILE_STORAGE',
];

/**
 * Gemini CLI: `gemini -p '' -o stream-json -m <model> --yolo --skip-trust [--resume <session id>]` with the
 * prompt on stdin. `-o stream-json` prints a JSON line per event on stdout (`init` with the session id,
 * assistant text deltas, tool calls and results, warnings) and ends with a `result` line (status, error,
 * token stats); it reports the same outcome as `-o json`, which prints everything in one object at the end
 * (see gemini-output.ts). The exit code is the error's code mod 256 (41 auth, 144 for an API 400).
 * `--resume` takes the session id of an earlier turn's `init` (also an index or `latest`), for sessions of
 * the same working folder; the stats count this process's requests only, so they are this turn's usage.
 */
export const geminiBackend: CliBackend = {
  name: 'gemini',
  command: 'gemini',
  authEnv: GEMINI_AUTH_ENV,
  buildInvocation: (turn) => ({ args: geminiArgs(turn), stdin: withSystemPrompt(turn) }),
  createParser: () => new GeminiOutputParser(),
};
