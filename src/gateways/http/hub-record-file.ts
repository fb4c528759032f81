import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { z } from 'zod';

/**
 * A small JSON file a running hub leaves for the CLI (its dashboard URL, its token), one record per
 * file, each naming the URL of the hub that wrote it. Both files share how they are written, read and
 * removed; only the record's schema and the folder differ.
 */
export interface HubRecord {
  readonly url: string;
  readonly pid: number;
}

/** Writes `record` atomically (temp file + rename), mode 0600; the folder must exist. */
export async function writeHubRecord(path: string, record: HubRecord): Promise<void> {
  const temp = `${path}.${record.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/**
 * The record in `path` as `schema` reads it, or undefined when the file is missing, unreadable (not
 * this user's), torn or foreign.
 */
export async function readHubRecord<S extends z.ZodType<HubRecord>>(
  path: string,
  schema: S,
): Promise<z.output<S> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined; // no file: no hub wrote one (or it stopped), or it is not ours to read
  }
  try {
    return schema.safeParse(JSON.parse(text)).data;
  } catch {
    return undefined; // a torn or foreign file counts as absent
  }
}

/**
 * Removes the file when it still belongs to the hub at `url`: a newer hub (on the same store or port)
 * may have replaced it, and its file must stay.
 */
export async function removeHubRecord(
  path: string,
  url: string,
  schema: z.ZodType<HubRecord>,
): Promise<void> {
  const current = await readHubRecord(path, schema);
  if (current?.url === url) await rm(path, { force: true });
}
