import { describeStoreConformance } from '../../../test/store-conformance/store-conformance.js';
import { MemoryStore } from './memory-store.js';

describeStoreConformance('memory', async (clock) => new MemoryStore({ clock }));
