import type { AgentBackend, AgentRunResult } from '../../agents/agent-runner.js';
import { turnFailureReason } from '../../agents/failure-reason.js';

/** What a probe turn showed. */
export interface ProbeDiagnosis {
  readonly problem: 'none' | 'auth' | 'endpoint' | 'permission' | 'timeout' | 'failed';
  /** The CLI's own words (its error, else stderr). */
  readonly detail: string;
  /** What to set or do. */
  readonly fix?: string;
}

const AUTH_FIX: Readonly<Record<Exclude<AgentBackend, 'scripted'>, string>> = {
  claude:
    'set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`, or CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX with their cloud credentials (docs/agents.md)',
  codex:
    'set OPENAI_API_KEY or CODEX_API_KEY, or run `codex login`; a custom provider needs its env_key variable in passEnv',
  gemini:
    'set GEMINI_API_KEY (or GOOGLE_API_KEY / GOOGLE_GENAI_USE_VERTEXAI with a project), and selectedType in ~/.gemini/settings.json',
  copilot:
    'set COPILOT_GITHUB_TOKEN / GH_TOKEN (a token with Copilot access), or BYOK COPILOT_PROVIDER_BASE_URL + COPILOT_PROVIDER_API_KEY',
  opencode: 'configure a provider in opencode.json (OPENCODE_CONFIG) and pass its key variable (passEnv)',
};

const AUTH =
  /not logged in|\/login|unauthori[sz]ed|\b401\b|\b403\b|invalid (x-)?api[ -]?key|api key|authenticat|auth method|credential|forbidden|no token/i;
const ENDPOINT =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|getaddrinfo|fetch failed|connection (refused|error|reset)|network|socket hang up|unable to connect|reconnecting|stream disconnected|certificate|self.signed/i;
const PERMISSION =
  /root\/sudo|--dangerously-skip-permissions|permission|sandbox|approval|not trusted|EACCES/i;

/**
 * Classifies the outcome of one probe turn into an auth, endpoint, permission or timeout problem with
 * the fix to apply; `none` when the turn answered.
 */
export function diagnoseProbe(
  backend: AgentBackend,
  result: AgentRunResult,
  timeoutMs: number,
): ProbeDiagnosis {
  if (result.timedOut) {
    return {
      problem: 'timeout',
      detail: `no answer within ${Math.round(timeoutMs / 1000)} s`,
      fix: 'the CLI is probably retrying an endpoint it cannot reach: check its base URL, proxy and network',
    };
  }
  if (!result.isError) return { problem: 'none', detail: result.text.trim().slice(0, 120) };
  const detail = turnFailureReason(result) || `exit ${String(result.exitCode ?? result.signal)}`;
  if (PERMISSION.test(detail)) {
    return {
      problem: 'permission',
      detail,
      fix: 'as root, set IS_SANDBOX=1 inside a container or choose agents.<name>.permissionMode (docs/agents.md, "Containers and root")',
    };
  }
  if (AUTH.test(detail)) {
    return { problem: 'auth', detail, ...(backend !== 'scripted' && { fix: AUTH_FIX[backend] }) };
  }
  if (ENDPOINT.test(detail)) {
    return {
      problem: 'endpoint',
      detail,
      fix: 'check the base URL / proxy variables the CLI reads (docs/agents.md) and that the host is reachable',
    };
  }
  return { problem: 'failed', detail };
}
