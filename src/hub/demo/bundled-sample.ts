import { existsSync } from 'node:fs';
import { cp, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MusubiError } from '../../core/errors.js';

/** The sample project and the goal the demo team works on, as shipped in `examples/`. */
export interface BundledSample {
  /** The pristine sample project (never written to). */
  readonly projectDir: string;
  /** The goal text file. */
  readonly goalFile: string;
}

const PROJECT = join('examples', 'demo-project');
const GOAL = join('examples', 'demo-goal.txt');

/**
 * Finds the bundled sample by walking up from `moduleUrl` to the package root: the same code runs from
 * `src/hub/demo/` (tsx) and from a `dist/` chunk (the built CLI). Throws NOT_FOUND when no ancestor
 * holds `examples/demo-project/package.json` and `examples/demo-goal.txt`.
 */
export function locateBundledSample(moduleUrl: string = import.meta.url): BundledSample {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, PROJECT, 'package.json')) && existsSync(join(dir, GOAL))) {
      return { projectDir: join(dir, PROJECT), goalFile: join(dir, GOAL) };
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new MusubiError(
        'NOT_FOUND',
        `the demo's sample project (${PROJECT}) is missing from this install`,
      );
    }
    dir = parent;
  }
}

/** The goal: the file's text without trailing white space; its first line is the goal's title. */
export async function readGoal(goalFile: string): Promise<{ readonly text: string; readonly title: string }> {
  const text = (await readFile(goalFile, 'utf8')).trimEnd();
  return { text, title: text.split('\n')[0]?.trim() ?? '' };
}

/**
 * Replaces `scratchDir` with a fresh copy of the sample project (the previous run's copy is deleted
 * first), so every run starts from the same files. Resolves once the copy is complete.
 */
export async function copySample(sample: BundledSample, scratchDir: string): Promise<void> {
  await rm(scratchDir, { recursive: true, force: true });
  await cp(sample.projectDir, scratchDir, {
    recursive: true,
    // A sample run by hand may have a node_modules folder; the demo never needs it.
    filter: (source) => !source.split(/[\\/]/).includes('node_modules'),
  });
}
