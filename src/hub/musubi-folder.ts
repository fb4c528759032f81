import { join, resolve } from 'node:path';
import { commonGitDirOf, ensureRepoFolder, REPO_FOLDER_NAME, repoTopOf } from '../runs/repo-folder.js';

/**
 * musubi's own folder for the files a command writes beside its work (the model endpoint's CLI
 * configs): `<repository top>/.musubi/` inside a git repository (created, and kept out of `git status`
 * through `info/exclude`), else `<cwd>/.musubi/` (not created here). Resolves to its path.
 */
export async function musubiFolderOf(cwd: string): Promise<string> {
  const top = repoTopOf(cwd);
  const gitDir = top === undefined ? undefined : commonGitDirOf(top);
  if (top === undefined || gitDir === undefined) return join(resolve(cwd), REPO_FOLDER_NAME);
  return ensureRepoFolder(top, gitDir);
}
