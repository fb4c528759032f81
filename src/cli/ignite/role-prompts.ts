import { existsSync } from 'node:fs';
import { instructionsFor } from '../../teams/org/org-instructions.js';
import { sendToolFor } from './workspace-init.js';

/** The role instructions of each agent of a runtime dir (system prompt of every turn). */
export function systemPrompts(runtimeDir: string): (agent: string) => string | undefined {
  const wrapper = sendToolFor(runtimeDir);
  const hasWrappers = existsSync(wrapper);
  const tools = hasWrappers
    ? { send: wrapper, mime: `${runtimeDir}/bin/ignite_mime` }
    : { send: 'musubi ignite send', mime: 'musubi ignite mime' };
  return (agent) => instructionsFor(agent, tools);
}
