import { mkdir, stat } from 'node:fs/promises';
import { MusubiError } from '../../core/errors.js';
import { errnoCode } from './os-error-text.js';

/**
 * Makes sure the socket directory exists: an existing directory is used as it is; a missing one is
 * created with mode 0700 — that directory only, never missing parents (spec yadon.md 2.1). Throws
 * GATEWAY_UNAVAILABLE naming the path when it cannot be used.
 */
export async function ensureSocketDir(dir: string): Promise<void> {
  const info = await stat(dir).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return null;
    throw new MusubiError(
      'GATEWAY_UNAVAILABLE',
      `cannot use socket directory ${dir}: ${errnoCode(err) ?? String(err)}`,
      {
        details: { path: dir },
        cause: err,
      },
    );
  });
  if (info?.isDirectory() === true) return;
  if (info !== null) {
    throw new MusubiError('GATEWAY_UNAVAILABLE', `socket directory ${dir} is not a directory`, {
      details: { path: dir },
    });
  }
  await mkdir(dir, { mode: 0o700 }).catch((err: unknown) => {
    if (errnoCode(err) === 'EEXIST') return;
    throw new MusubiError(
      'GATEWAY_UNAVAILABLE',
      `cannot create socket directory ${dir}: ${errnoCode(err) === 'ENOENT' ? 'its parent does not exist' : (errnoCode(err) ?? String(err))}`,
      { details: { path: dir }, cause: err },
    );
  });
}
