import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialQueue } from '../core/serial-queue.js';
import type { Git } from './git.js';
import { ensureRepoFolder, repoFolderOf } from './repo-folder.js';

/** Subtask ids and run ids are musubi's own (`<run>-<phase>-sub<j>`); anything else never names a path. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function checked(name: string): string {
  if (!SAFE_NAME.test(name) || name.includes('..')) throw new RangeError(`not a safe worktree name: ${name}`);
  return name;
}

/**
 * The git worktrees of one run, under `<top>/.musubi/worktrees/<run-id>/`: musubi's own folder of the
 * repository, which `info/exclude` keeps out of the user's `git status` (see repo-folder.ts). Not under
 * `.git/`: agents' edit guards (Claude Code's acceptEdits) refuse every write below a `.git` folder.
 * Adding one first clears what a killed run may have left under the same name (its folder, its
 * registration, its branch).
 */
export class RunWorktrees {
  readonly #git: Git;
  readonly #repo: string;
  readonly #gitDir: string;
  readonly #root: string;
  readonly #changes = new SerialQueue();

  /** `repo` is the top of the user's working tree, `gitDir` its common git directory (for the exclude). */
  constructor(git: Git, repo: string, gitDir: string, runId: string) {
    this.#git = git;
    this.#repo = repo;
    this.#gitDir = gitDir;
    this.#root = join(repoFolderOf(repo), 'worktrees', checked(runId));
  }

  get root(): string {
    return this.#root;
  }

  /** The folder of worktree `name`. */
  pathOf(name: string): string {
    return join(this.#root, checked(name));
  }

  /**
   * The run's integration worktree on `branch` (created from `base` when the branch is new), cleaned of
   * any half-done merge or stray change a killed run left. Reused when it is there.
   */
  integration(branch: string, base: string): Promise<string> {
    return this.#changes.run(() => this.#integration(branch, base));
  }

  async #integration(branch: string, base: string): Promise<string> {
    const dir = this.pathOf('integration');
    await ensureRepoFolder(this.#repo, this.#gitDir);
    await this.#git.out(this.#repo, ['worktree', 'prune']);
    if (!existsSync(join(dir, '.git'))) {
      await rm(dir, { recursive: true, force: true });
      const exists = (await this.#git.commitOf(this.#repo, `refs/heads/${branch}`)) !== undefined;
      await this.#git.out(this.#repo, [
        'worktree',
        'add',
        '-q',
        ...(exists ? [dir, branch] : ['-b', branch, dir, base]),
      ]);
      return dir;
    }
    await this.#git.run(dir, ['merge', '--abort']);
    await this.#git.out(dir, ['reset', '-q', '--hard', 'HEAD']);
    await this.#git.out(dir, ['clean', '-q', '-fdx']);
    return dir;
  }

  /**
   * A fresh worktree `name` on `branch` (created, or reset when a killed run left it) at `from`; a
   * leftover folder of the same name is removed first. Worktree changes run one at a time: git's own
   * bookkeeping (`.git/worktrees/`) is not safe against a prune while another worktree is being added.
   */
  fresh(name: string, branch: string, from: string): Promise<string> {
    const dir = this.pathOf(name);
    return this.#changes.run(async () => {
      await ensureRepoFolder(this.#repo, this.#gitDir);
      if (existsSync(dir)) await this.#removeNow(dir, true);
      await this.#git.out(this.#repo, ['worktree', 'add', '-q', '-B', branch, dir, from]);
      return dir;
    });
  }

  /** Removes worktree `name` (its branch stays). Idempotent. */
  remove(name: string): Promise<void> {
    return this.#changes.run(() => this.#removeNow(this.pathOf(name), true));
  }

  /** Removes every worktree of the run and its folder, then forgets them in one prune. */
  removeAll(names: readonly string[]): Promise<void> {
    return this.#changes.run(async () => {
      for (const name of [...names, 'integration']) await this.#removeNow(this.pathOf(name), false);
      await rm(this.#root, { recursive: true, force: true });
      await this.#git.out(this.#repo, ['worktree', 'prune']);
    });
  }

  async #removeNow(dir: string, isPruned: boolean): Promise<void> {
    if (!existsSync(dir)) return;
    const removed = await this.#git.run(this.#repo, ['worktree', 'remove', '--force', dir]);
    if (removed.code === 0) return;
    // Not a registered worktree any more (a killed run's half-made one): the folder goes by hand.
    await rm(dir, { recursive: true, force: true });
    if (isPruned) await this.#git.out(this.#repo, ['worktree', 'prune']);
  }
}
