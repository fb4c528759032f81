import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    // Not there or not executable: the lookup moves on to the next PATH entry.
    return false;
  }
}

/**
 * Finds `name` the way execvp would: a name with a slash is checked as given (relative to `cwd`),
 * otherwise each PATH entry in order. Resolves the absolute path, or null when nothing executable is found.
 */
export async function resolveExecutable(
  name: string,
  pathEnv: string | undefined,
  cwd: string,
): Promise<string | null> {
  if (name.includes('/')) {
    const path = isAbsolute(name) ? name : resolve(cwd, name);
    return (await isExecutableFile(path)) ? path : null;
  }
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(resolve(cwd, dir), name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}
