import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

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
  const temp = `${path}.${record.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/** The record in `path`, or undefined when the file is missing or not a valid record. */
export async function readUrlFile(path: string): Promise<UrlFileRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined; // no file: no hub wrote one (or it stopped)
  }
  try {
    return urlFileSchema.safeParse(JSON.parse(text)).data;
  } catch {
    return undefined; // a torn or foreign file counts as absent
  }
}

/** Removes the file when it still holds `url` (a newer hub on the same store may have replaced it). */
export async function removeUrlFile(path: string, url: string): Promise<void> {
  const current = await readUrlFile(path);
  if (current?.url === url) await rm(path, { force: true });
}
