import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_INSTRUCTIONS, type InstructionFile } from './agent-instructions.js';

const FILES: readonly InstructionFile[] = ['yadon.md', 'yadoran.md', 'yadoking.md'];

/**
 * Writes the packaged agent instruction files (`yadon.md`, `yadoran.md`, `yadoking.md`) into `dir`
 * (created 0700; files 0600, rewritten at every start) and returns the absolute path of each.
 */
export async function writeInstructionFiles(dir: string): Promise<Record<InstructionFile, string>> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await Promise.all(
    FILES.map((name) => writeFile(join(dir, name), AGENT_INSTRUCTIONS[name], { mode: 0o600 })),
  );
  return {
    'yadon.md': join(dir, 'yadon.md'),
    'yadoran.md': join(dir, 'yadoran.md'),
    'yadoking.md': join(dir, 'yadoking.md'),
  };
}
