import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('public API', () => {
  it('exports exactly the pinned runtime names', () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        'DEFAULT_RECEIVE_TIMEOUT_MS',
        'ErrorCodes',
        'MAILBOX_NAME_PATTERN',
        'MusubiError',
        'PRIORITIES',
        'assertMailboxName',
        'backoffDelayMs',
        'configSchema',
        'createBus',
        'createEnvelope',
        'createIdGenerator',
        'createLogger',
        'createSilentLogger',
        'createSystemClock',
        'envelopeSchema',
        'isMailboxName',
        'isMusubiError',
        'loadConfig',
        'openStore',
        'parseEnvelope',
        'parseStoreUrl',
        'startHub',
      ].sort(),
    );
  });
});
