import { execFile } from 'node:child_process';
import { MusubiError } from '../core/errors.js';

/** What one git command printed and how it exited. */
export interface GitResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Who musubi's own commits are by when the repository names nobody. */
const FALLBACK_IDENTITY = ['-c', 'user.name=musubi', '-c', 'user.email=musubi@localhost'];

/**
 * git, run as a child process with an argument list (never a shell string), no prompts, no pager,
 * no signing of musubi's own commits. One instance per repository.
 */
export class Git {
  readonly #env: NodeJS.ProcessEnv;
  #identity: readonly string[] | undefined;

  constructor(env: Readonly<Record<string, string | undefined>> = process.env) {
    this.#env = { ...env, GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' };
  }

  /** Runs `git <args>` in `cwd`; resolves whatever the exit code (rejects only when git cannot start). */
  run(cwd: string, args: readonly string[], stdin?: string): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        'git',
        [...args],
        { cwd, env: this.#env, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' },
        (err, stdout, stderr) => {
          if (err !== null && typeof err.code !== 'number') {
            reject(new MusubiError('RUN_GIT_FAILED', `git could not run: ${err.message}`, { cause: err }));
            return;
          }
          resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr });
        },
      );
      if (stdin !== undefined) child.stdin?.end(stdin);
    });
  }

  /** Runs `git <args>` and resolves its stdout; RUN_GIT_FAILED with git's own message on a non-zero exit. */
  async out(cwd: string, args: readonly string[]): Promise<string> {
    const result = await this.run(cwd, args);
    if (result.code !== 0) {
      const said = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(0, 5).join('\n');
      throw new MusubiError('RUN_GIT_FAILED', `git ${args[0] ?? ''} failed: ${said}`, {
        details: { args: [...args], code: result.code },
      });
    }
    return result.stdout;
  }

  /** The top of the work tree holding `dir`, or undefined when `dir` is in no git repository. */
  async topLevel(dir: string): Promise<string | undefined> {
    const result = await this.run(dir, ['rev-parse', '--show-toplevel']);
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  /** The repository's shared git directory (absolute): where musubi keeps its run worktrees and state. */
  async commonDir(repo: string): Promise<string> {
    return (await this.out(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  }

  /** The commit `rev` names, or undefined (an unborn HEAD, say). */
  async commitOf(cwd: string, rev: string): Promise<string | undefined> {
    const result = await this.run(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  /** Whether the work tree at `cwd` has no change at all, untracked files included. */
  async isClean(cwd: string): Promise<boolean> {
    return (await this.out(cwd, ['status', '--porcelain', '--untracked-files=all'])).trim() === '';
  }

  /** Commits everything in the work tree at `cwd` (musubi's commit: no hooks, no signing); false when nothing changed. */
  async commitAll(cwd: string, message: string): Promise<boolean> {
    await this.out(cwd, ['add', '-A']);
    const staged = await this.run(cwd, ['diff', '--cached', '--quiet']);
    if (staged.code === 0) return false;
    await this.#commit(cwd, ['-m', message]);
    return true;
  }

  /** `git merge --no-ff` of `branch` into the work tree at `cwd`: merged, already in, or conflicting files. */
  async merge(
    cwd: string,
    branch: string,
    message: string,
  ): Promise<
    { readonly kind: 'merged' | 'up-to-date' } | { readonly kind: 'conflict'; readonly files: string[] }
  > {
    const identity = await this.#identityArgs(cwd);
    const result = await this.run(cwd, [
      ...identity,
      'merge',
      '--no-ff',
      '--no-verify',
      '--no-gpg-sign',
      '-m',
      message,
      branch,
    ]);
    if (result.code === 0) {
      return { kind: /Already up to date/i.test(result.stdout) ? 'up-to-date' : 'merged' };
    }
    const files = await this.unmergedFiles(cwd);
    if (files.length === 0) {
      throw new MusubiError(
        'RUN_GIT_FAILED',
        `git merge ${branch} failed: ${result.stderr.trim() || result.stdout.trim()}`,
      );
    }
    return { kind: 'conflict', files };
  }

  /** Files git still lists as unmerged in the work tree at `cwd`. */
  async unmergedFiles(cwd: string): Promise<string[]> {
    const out = await this.out(cwd, ['diff', '--name-only', '--diff-filter=U', '-z']);
    return out.split('\0').filter((f) => f !== '');
  }

  /** Concludes a merge whose conflicts were resolved (everything staged, musubi's commit). */
  async concludeMerge(cwd: string): Promise<void> {
    await this.out(cwd, ['add', '-A']);
    await this.#commit(cwd, ['--no-edit']);
  }

  /** The files changed between two commits. */
  async changedFiles(cwd: string, from: string, to: string): Promise<string[]> {
    const out = await this.out(cwd, ['diff', '--name-only', '-z', from, to]);
    return out.split('\0').filter((f) => f !== '');
  }

  /** musubi's own commit: no hooks, no signing, the fallback identity when the repository has none. */
  async #commit(cwd: string, args: readonly string[]): Promise<void> {
    await this.out(cwd, [
      ...(await this.#identityArgs(cwd)),
      'commit',
      '--no-verify',
      '--no-gpg-sign',
      '-q',
      ...args,
    ]);
  }

  async #identityArgs(cwd: string): Promise<readonly string[]> {
    if (this.#identity !== undefined) return this.#identity;
    const name = await this.run(cwd, ['config', 'user.name']);
    const email = await this.run(cwd, ['config', 'user.email']);
    this.#identity = name.code === 0 && email.code === 0 ? [] : FALLBACK_IDENTITY;
    return this.#identity;
  }
}
