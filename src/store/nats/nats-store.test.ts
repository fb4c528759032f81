import { afterAll, afterEach, describe } from 'vitest';
import {
  deleteNamespace,
  natsUnavailableReason,
  SHARED_NATS,
  uniquePrefix,
} from '../../../test/fixtures/nats-server.js';
import { describeStoreConformance } from '../store.conformance.js';
import { parseNatsUrl } from './nats-location.js';
import { NatsStore } from './nats-store.js';

// Every store gets its own prefix on the shared server; its streams are deleted after the case.
const unavailable = await natsUnavailableReason();
const created: string[] = [];

afterEach(async () => {
  for (const prefix of created.splice(0)) await deleteNamespace(SHARED_NATS, prefix);
});
afterAll(async () => {
  for (const prefix of created.splice(0)) await deleteNamespace(SHARED_NATS, prefix);
});

describe.skipIf(unavailable !== null)(`NatsStore on ${SHARED_NATS}`, () => {
  describeStoreConformance('nats', async (clock) => {
    const prefix = uniquePrefix('conf');
    created.push(prefix);
    return NatsStore.open({ location: parseNatsUrl(`nats://${SHARED_NATS}?prefix=${prefix}`), clock });
  });
});
