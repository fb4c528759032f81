import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { readHubRecord, removeHubRecord, writeHubRecord } from './hub-record-file.js';

/** The URL file's name. */
export const URL_FILE_NAME = 'dashboard.json';

/**
 * Where a hub leaves its dashboard URL: beside its SQLite database when it has one, else in
 * `<cwd>/.musubi/`. `musubi up` and `musubi dashboard` both call this with the same config, so they agree.
 */
export function urlFilePath(options: { readonly cwd: string; readonly sqliteFile?: string }): string {
  const dir = options.sqliteFile === undefined ? join(options.cwd, '.musubi') : dirname(options.sqliteFile);
  return join(dir, URL_FILE_NAME);
}

/** What a running HTTP gateway leaves beside the store so `musubi dashboard` can find it. */
export const urlFileSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  /** True when the gateway needs its token (append `?token=` to open the page). */
  needsToken: z.boolean(),
  pid: z.number().int().positive(),
  startedAt: z.number().int().nonnegative(),
});
export type UrlFileRecord = z.infer<typeof urlFileSchema>;

/** Writes the record atomically (temp file + rename), mode 0600. The token itself is never written. */
export async function writeUrlFile(path: string, record: UrlFileRecord): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeHubRecord(path, record);
}

/** The record in `path`, or undefined when the file is missing or not a valid record. */
export function readUrlFile(path: string): Promise<UrlFileRecord | undefined> {
  return readHubRecord(path, urlFileSchema);
}

/** Removes the file when it still holds `url` (a newer hub on the same store may have replaced it). */
export function removeUrlFile(path: string, url: string): Promise<void> {
  return removeHubRecord(path, url, urlFileSchema);
}
