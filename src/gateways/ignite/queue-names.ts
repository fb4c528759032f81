import { readdir } from 'node:fs/promises';
import { decodeUtf8Strict } from './mime/strict-utf8.js';

/** `.<final name>.<random>.tmp`: the temp file of an atomic writer (spec 2.2). */
export const TEMP_NAME = /^\.(.+\.(?:mime|yaml))\.[^./]+\.tmp$/;

/** Only `*.mime` / `*.yaml` names not starting with `.` are queue files (spec 4.2). */
export const isCandidateName = (name: string): boolean =>
  !name.startsWith('.') && (name.endsWith('.mime') || name.endsWith('.yaml'));

/** A folder's entry names: `names` decoded as strict UTF-8, `undecodable` the names that are not UTF-8. */
export interface FolderNames {
  readonly names: string[];
  readonly undecodable: Buffer[];
}

/**
 * Lists `dir` (empty when it cannot be read). A name that is not valid UTF-8 cannot be opened through a
 * string path — Node would decode it with U+FFFD — so it is returned apart, as its bytes.
 */
export async function listFolderNames(dir: string): Promise<FolderNames> {
  const result: FolderNames = { names: [], undecodable: [] };
  for (const bytes of await readdir(dir, { encoding: 'buffer' }).catch(() => [])) {
    try {
      result.names.push(decodeUtf8Strict(bytes));
    } catch {
      result.undecodable.push(bytes);
    }
  }
  return result;
}
