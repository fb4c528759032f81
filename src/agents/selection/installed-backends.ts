import type { AgentBackend } from '../agent-runner.js';
import { CLI_BACKENDS } from '../cli/cli-backends.js';
import { resolveExecutable } from '../process/resolve-executable.js';

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
