import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import { AGENT_BACKENDS, type AgentBackend } from '../agent-runner.js';
import type { CliSettings } from '../cli/cli-backend.js';
import { CLI_BACKENDS } from '../cli/cli-backends.js';
import { resolveExecutable } from '../process/resolve-executable.js';
import { agentEnvOf } from './agent-env.js';
import { lookupAlias } from './backend-aliases.js';
import { selectBackend } from './select-backend.js';

/** Inputs of {@link resolveAgentChoice}. */
export interface ResolveAgentChoiceInput {
  readonly config: Pick<Config, 'agents'> & Partial<Pick<Config, 'backends'>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** An explicit backend (a flag); wins over every rule. */
  readonly backend?: string;
  /** The configured agent whose backend, model and settings apply. */
  readonly agent?: string;
  readonly model?: string;
}

/** Everything needed to build the agent's runner, plus its configured working directory. */
export interface AgentChoice {
  readonly backend: AgentBackend;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly settings: CliSettings;
  readonly extraEnv?: Readonly<Record<string, string>>;
  readonly passEnv?: readonly string[];
  readonly cwd?: string;
}

/** The CLI backends whose binary is on the PATH of `env`. */
export async function installedBackends(
  env: Readonly<Record<string, string | undefined>>,
): Promise<Set<AgentBackend>> {
  const found = await Promise.all(
    Object.values(CLI_BACKENDS).map(async (b) =>
      (await resolveExecutable(b.command, env['PATH'], '/')) === null ? [] : [b.name],
    ),
  );
  return new Set(found.flat());
}

/**
 * Resolves backend, model and CLI settings for one agent: an explicit backend (flag) first, else
 * {@link selectBackend}'s rules; the agent's config entry supplies model, system prompt, permission
 * mode, sandbox, max turns and extra environment. Throws AGENT_BACKEND_UNKNOWN for an unknown name.
 */
export async function resolveAgentChoice(input: ResolveAgentChoiceInput): Promise<AgentChoice> {
  const entry = input.agent === undefined ? undefined : input.config.agents[input.agent];
  let backend: AgentBackend;
  let model: string | undefined;
  if (input.backend !== undefined) {
    const alias = lookupAlias(input.backend);
    if (alias === undefined) {
      throw new MusubiError(
        'AGENT_BACKEND_UNKNOWN',
        `unknown agent backend '${input.backend}' (known: ${AGENT_BACKENDS.join(', ')}, claude-opus)`,
      );
    }
    backend = alias.backend;
    // A plain backend name keeps the CLI's own default model; a tier alias (claude-opus) names one.
    model = alias.name === alias.backend ? undefined : alias.models?.worker;
  } else {
    const installed = await installedBackends(input.env);
    const selection = selectBackend({
      agent: input.agent ?? 'cli',
      config: input.config,
      env: input.env,
      isInstalled: (b) => installed.has(b),
      ...(entry?.role !== undefined && { role: entry.role }),
    });
    backend = selection.backend;
    model = selection.model;
  }
  model = input.model ?? (input.backend === undefined ? model : (entry?.model ?? model));
  const settings: CliSettings = {
    ...(entry?.permissionMode !== undefined && { permissionMode: entry.permissionMode }),
    ...(entry?.sandbox !== undefined && { sandbox: entry.sandbox }),
    ...(entry?.maxTurns !== undefined && { maxTurns: entry.maxTurns }),
  };
  return {
    backend,
    settings,
    ...(model !== undefined && { model }),
    ...(entry?.systemPrompt !== undefined && { systemPrompt: entry.systemPrompt }),
    ...agentEnvOf(input.config, backend, entry),
    ...(entry?.cwd !== undefined && { cwd: entry.cwd }),
  };
}
