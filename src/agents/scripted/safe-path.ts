import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { MusubiError } from '../../core/errors.js';

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** The real path of `path`, or of its deepest existing ancestor joined with the missing rest. */
async function realpathOfExisting(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    // Does not exist (yet): resolve the parent instead and keep the missing tail as written.
    const parent = dirname(path);
    if (parent === path) return path;
    return resolve(await realpathOfExisting(parent), relative(parent, path));
  }
}

/**
 * Resolves `path` (relative to `cwd`, or absolute) and checks that it stays inside `cwd`, both as
 * written (`..`) and after following symlinks of every existing component (a link pointing outside).
 * Resolves the absolute path; throws PATH_OUTSIDE_CWD otherwise. The check is advisory against a
 * concurrent swap of a component (TOCTOU): the scripted agent is a test and demo agent, not a sandbox.
 */
export async function resolveInsideCwd(cwd: string, path: string): Promise<string> {
  const root = await realpath(cwd);
  const target = resolve(cwd, path);
  const refuse = (why: string): MusubiError =>
    new MusubiError('PATH_OUTSIDE_CWD', `path '${path}' ${why} the working directory ${cwd}`, {
      details: { path, cwd },
    });
  if (!isInside(resolve(cwd), target)) throw refuse('is outside');
  if (!isInside(root, await realpathOfExisting(target))) throw refuse('resolves (through a symlink) outside');
  return target;
}
