import type { AgentBackend } from '../agent-runner.js';
import { claudeBackend } from '../claude/claude-backend.js';
import { codexBackend } from '../codex/codex-backend.js';
import { copilotBackend } from '../copilot/copilot-backend.js';
import { geminiBackend } from '../gemini/gemini-backend.js';
import { opencodeBackend } from '../opencode/opencode-backend.js';
import type { CliBackend } from './cli-backend.js';

/** Every CLI backend by name, in the order `agent doctor` lists them and default selection tries them. */
export const CLI_BACKENDS: Readonly<Record<Exclude<AgentBackend, 'scripted'>, CliBackend>> = {
  claude: claudeBackend,
  codex: codexBackend,
  gemini: geminiBackend,
  copilot: copilotBackend,
  opencode: opencodeBackend,
};
