import { existsSync, readFileSync, statSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** musubi's one folder in a repository (`<top>/.musubi/`): the store, the run worktrees, the URL file. */
export const REPO_FOLDER_NAME = '.musubi';

/** The line of `info/exclude` that keeps musubi's folder out of `git status` of every worktree. */
const EXCLUDE_LINE = `/${REPO_FOLDER_NAME}/`;

/**
 * The top of the working tree holding `dir`: the nearest folder from `dir` up with a `.git` entry (a
 * folder, or the file of a linked worktree or submodule), as git finds it without GIT_DIR. Undefined
 * outside a repository. Synchronous and without a git process: every command asks it once at start.
 */
export function repoTopOf(dir: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * The common git directory of the working tree at `top` (the main `.git` for a linked worktree), read
 * from the files git's layout documents (`.git` file's `gitdir:`, then `commondir`). Undefined when
 * `top/.git` is neither a folder nor such a file.
 */
export function commonGitDirOf(top: string): string | undefined {
  const dotGit = join(top, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
    if (pointer === undefined) return undefined;
    const gitDir = resolve(top, pointer);
    const commonFile = join(gitDir, 'commondir');
    return existsSync(commonFile) ? resolve(gitDir, readFileSync(commonFile, 'utf8').trim()) : gitDir;
  } catch (err) {
    // A `.git` that vanished or cannot be read names no repository here; the caller falls back to the cwd.
    if (err instanceof Error && 'code' in err && typeof err.code === 'string') return undefined;
    throw err;
  }
}

/** The path of musubi's folder in the working tree at `top`. */
export function repoFolderOf(top: string): string {
  return join(top, REPO_FOLDER_NAME);
}

/**
 * Creates musubi's folder of the working tree at `top` (mode 0700) and makes sure `/.musubi/` is a line
 * of `<gitDir>/info/exclude` (`gitDir` the common git directory: the exclude then holds for every
 * worktree), never of a tracked file. Idempotent: the line is added only when it is not there.
 * Resolves to the folder's path.
 */
export async function ensureRepoFolder(top: string, gitDir: string): Promise<string> {
  const folder = repoFolderOf(top);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const exclude = join(gitDir, 'info', 'exclude');
  const text = await readFile(exclude, 'utf8').catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text?.split(/\r?\n/).some((line) => line.trim() === EXCLUDE_LINE) === true) return folder;
  await mkdir(dirname(exclude), { recursive: true });
  const separator = text === undefined || text === '' || text.endsWith('\n') ? '' : '\n';
  await appendFile(exclude, `${separator}# musubi's own folder (store, run worktrees)\n${EXCLUDE_LINE}\n`);
  return folder;
}
