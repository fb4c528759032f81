import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { describeStoreConformance } from '../../../test/store-conformance/store-conformance.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let fileNo = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-conformance-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeStoreConformance('sqlite', async (clock) =>
  SqliteStore.open({ path: join(dir, `store-${fileNo++}.db`), clock }),
);
