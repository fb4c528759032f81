import { readFile } from 'node:fs/promises';
import { minVersion, satisfies } from 'semver';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const ROOT = new URL('../../', import.meta.url);

const enginesSchema = z.object({ node: z.string().optional() }).passthrough();
const manifestSchema = z
  .object({
    engines: enginesSchema.optional(),
    bin: z.record(z.string(), z.string()).optional(),
    dependencies: z.record(z.string(), z.string()).optional(),
    devDependencies: z.record(z.string(), z.string()).optional(),
  })
  .passthrough();
const lockSchema = z.object({
  lockfileVersion: z.number(),
  packages: z.record(z.string(), manifestSchema.extend({ version: z.string().optional() })),
});

async function readJson<T>(name: string, schema: z.ZodType<T>): Promise<T> {
  return schema.parse(JSON.parse(await readFile(new URL(name, ROOT), 'utf8')));
}

describe('package - engines and lockfile', () => {
  it('locks only packages whose engines.node admits the oldest Node the project supports', async () => {
    const manifest = await readJson('package.json', manifestSchema);
    const oldest = minVersion(manifest.engines?.node ?? '');
    expect(oldest?.version).toBe('20.19.0');
    const lock = await readJson('package-lock.json', lockSchema);
    const refused = Object.entries(lock.packages)
      .filter(([, entry]) => entry.engines?.node !== undefined)
      .filter(([, entry]) => !satisfies(oldest ?? '', entry.engines?.node ?? '', { includePrerelease: true }))
      .map(([path, entry]) => `${path}@${entry.version ?? '?'} wants node ${entry.engines?.node ?? ''}`);
    expect(refused).toEqual([]);
  });

  it('keeps the root entry of package-lock.json in step with package.json, so npm install rewrites nothing', async () => {
    const manifest = await readJson('package.json', manifestSchema);
    const root = (await readJson('package-lock.json', lockSchema)).packages[''];
    const pick = (m: z.infer<typeof manifestSchema> | undefined) => ({
      bin: m?.bin,
      dependencies: m?.dependencies,
      devDependencies: m?.devDependencies,
      engines: m?.engines,
    });
    expect(pick(root)).toEqual(pick(manifest));
  });
});
