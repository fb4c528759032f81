import { lookupAlias } from '../../agents/selection/backend-aliases.js';
import { CLI_BACKENDS } from '../../agents/cli/cli-backends.js';
import { coordinatorSystemPrompt } from '../../gateways/yadon/agent-instructions.js';
import { claudePermissionArgs } from '../../agents/claude/claude-backend.js';

/** The multi-LLM rotation of spec yadon.md 4.5. */
const MULTI_LLM_BACKENDS = ['copilot', 'gemini', 'claude-opus', 'opencode'] as const;

/** The interactive coordinator to launch, or null when the global backend has none (scripted). */
export interface CoordinatorLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The environment the host gets (spec yadon.md 4.5): with `--multi-llm`, every worker n whose
 * `YADON_<n>_BACKEND` is not set gets `['copilot','gemini','claude-opus','opencode'][(n-1) mod 4]`;
 * without it, `YADON_1_BACKEND` … `YADON_<N>_BACKEND` are removed. Also returns each worker's backend
 * name for the banner (multi-LLM only).
 */
export function hostEnvironment(
  env: NodeJS.ProcessEnv,
  count: number,
  isMultiLlm: boolean,
): { env: NodeJS.ProcessEnv; table: Array<{ n: number; backend: string }> } {
  const out: NodeJS.ProcessEnv = { ...env };
  const table: Array<{ n: number; backend: string }> = [];
  for (let n = 1; n <= count; n++) {
    const key = `YADON_${n}_BACKEND`;
    if (!isMultiLlm) {
      delete out[key];
      continue;
    }
    const preset = out[key];
    const backend =
      preset === undefined || preset === '' ? (MULTI_LLM_BACKENDS[(n - 1) % 4] ?? 'claude') : preset;
    out[key] = backend;
    table.push({ n, backend });
  }
  return { env: out, table };
}

/**
 * The coordinator (ヤドキング) command for the global backend `LLM_BACKEND` (unknown → claude): claude
 * gets `--model <coordinator model> --append-system-prompt <prompt>`, plus
 * `--dangerously-skip-permissions` only when the backend is exactly `claude` (`--permission-mode
 * acceptEdits` as root without IS_SANDBOX=1, which claude would refuse). The other CLIs have no
 * system-prompt flag: they get `--model` and (gemini, codex) the prompt as their opening message.
 * The environment adds AGENT_ROLE=yadoking and AGENT_ROLE_LEVEL=coordinator. Null for `scripted`.
 */
export function coordinatorLaunch(env: NodeJS.ProcessEnv, workDir: string): CoordinatorLaunch | null {
  const alias = lookupAlias(env['LLM_BACKEND']) ?? lookupAlias('claude');
  if (alias === undefined || alias.backend === 'scripted') return null;
  const prompt = coordinatorSystemPrompt(workDir);
  const model = alias.models?.coordinator;
  const modelArgs = model === undefined ? [] : ['--model', model];
  let args: string[];
  if (alias.backend === 'claude') {
    args = [...modelArgs, '--append-system-prompt', prompt];
    // As root without IS_SANDBOX=1 claude refuses the bypass flag; it then gets acceptEdits instead.
    if (alias.name === 'claude') args.push(...claudePermissionArgs(process.getuid?.() === 0, env, undefined));
  } else if (alias.backend === 'gemini' || alias.backend === 'codex') {
    args = [...modelArgs, prompt];
  } else {
    args = modelArgs;
  }
  return {
    command: CLI_BACKENDS[alias.backend].command,
    args,
    env: { ...env, AGENT_ROLE: 'yadoking', AGENT_ROLE_LEVEL: 'coordinator' },
  };
}
