import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXED_AGENTS } from '../../gateways/ignite/agent-names.js';
import { instructionsFor } from '../../teams/org/org-instructions.js';
import { orgAgents } from '../../teams/org/org-roles.js';
import { shellQuote } from '../../core/shell-quote.js';
import { toolCommands, type ToolCommands } from './tool-commands.js';

/** The default `system.yaml` written by `ignite init` (every key optional; env and flags override). */
const SYSTEM_YAML = `# IGNITE settings read by musubi's queue monitor (docs/ignite.md: defaults < this file < musubi.yaml < environment < flags).
queue:
  poll_interval: 10   # seconds between safety-net rescans (events find files at once)
  parallel_max: 4     # agents served in parallel
  max_turn: 3600      # seconds before a running turn is stopped
defaults:
  task_timeout: 300   # lease of a claimed message, 30..3600 seconds (renewed while the turn runs)
`;

/** Paths `ignite init` created or found. */
export interface InitResult {
  readonly runtimeDir: string;
  readonly sendWrapper: string;
  readonly mimeWrapper: string;
}

function wrapper(argv: readonly string[], extraEnv = ''): string {
  return `#!/bin/sh\n# Written by musubi ignite init: forwards every argument unchanged.\n${extraEnv}exec ${argv.map(shellQuote).join(' ')} "$@"\n`;
}

/** The send tool command agents of a workspace are told to use (the wrapper when it exists). */
export function sendToolFor(runtimeDir: string): string {
  return join(runtimeDir, 'bin', 'send_message.sh');
}

/**
 * `musubi ignite init [dir]`: creates `<dir>/.ignite/` with the queue folders of the six fixed agents and
 * `ignitian_1..workers`, `state/`, `logs/`, `queue/dead_letter/`, a `system.yaml`, wrapper scripts
 * `bin/send_message.sh` and `bin/ignite_mime` at the locations agent instructions call, and one
 * instruction file per agent in `instructions/`. Existing files are kept (system.yaml) or refreshed
 * (wrappers, instructions). Resolves the created paths.
 */
export async function initWorkspace(
  workspace: string,
  workers: number,
  tools: ToolCommands = toolCommands(),
): Promise<InitResult> {
  const rt = join(workspace, '.ignite');
  const agents = orgAgents(workers);
  for (const dir of [
    'state',
    'logs',
    'bin',
    'instructions',
    'queue/dead_letter',
    ...[...FIXED_AGENTS, ...agents].map((a) => `queue/${a}`),
  ]) {
    await mkdir(join(rt, dir), { recursive: true, mode: 0o700 });
  }
  const systemYaml = join(rt, 'system.yaml');
  if ((await readFile(systemYaml, 'utf8').catch(() => null)) === null)
    await writeFile(systemYaml, SYSTEM_YAML, { mode: 0o600 });
  const sendWrapper = sendToolFor(rt);
  const mimeWrapper = join(rt, 'bin', 'ignite_mime');
  await writeFile(
    sendWrapper,
    wrapper(tools.send, 'MUSUBI_IGNITE_SEND_NAME=send_message.sh; export MUSUBI_IGNITE_SEND_NAME\n'),
  );
  await writeFile(mimeWrapper, wrapper(tools.mime));
  await chmod(sendWrapper, 0o755);
  await chmod(mimeWrapper, 0o755);
  for (const agent of agents) {
    const text = instructionsFor(agent, { send: sendWrapper, mime: mimeWrapper });
    if (text !== undefined)
      await writeFile(join(rt, 'instructions', `${agent}.md`), `${text}\n`, { mode: 0o600 });
  }
  return { runtimeDir: rt, sendWrapper, mimeWrapper };
}
