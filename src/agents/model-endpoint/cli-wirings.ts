import type { AgentBackend } from '../agent-runner.js';
import { wireClaude } from '../claude/claude-wiring.js';
import { wireCodex } from '../codex/codex-wiring.js';
import { wireCopilot } from '../copilot/copilot-wiring.js';
import { wireGemini } from '../gemini/gemini-wiring.js';
import { wireOpencode } from '../opencode/opencode-wiring.js';
import type { WireCli } from './endpoint-wiring.js';

/** How to point each agent CLI at a model endpoint (see each backend's `*-wiring.ts`). */
export const CLI_WIRINGS: Readonly<Record<Exclude<AgentBackend, 'scripted'>, WireCli>> = {
  claude: wireClaude,
  codex: wireCodex,
  gemini: wireGemini,
  copilot: wireCopilot,
  opencode: wireOpencode,
};
