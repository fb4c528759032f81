// The public API of musubi as a library. Explicit named exports only; src/index.test.ts pins the list.
export { createBus, DEFAULT_RECEIVE_TIMEOUT_MS } from './bus/bus.js';
export type { BusConfig, CreateBusOptions } from './bus/bus.js';
export type { Bus, KvState, NackOutcome, ReceiveOptions, SendResult } from './bus/bus.types.js';
export { backoffDelayMs } from './bus/retry-policy.js';
export type { RetryConfig } from './bus/retry-policy.js';
export { createSystemClock } from './core/clock.js';
export type { Clock, Timer } from './core/clock.js';
export { configSchema } from './core/config.schema.js';
export type { Config, ConfigInput } from './core/config.schema.js';
export { createEnvelope, envelopeSchema, parseEnvelope, PRIORITIES } from './core/envelope.js';
export type { Envelope, EnvelopeInput, Priority } from './core/envelope.js';
export { ErrorCodes, isMusubiError, MusubiError } from './core/errors.js';
export type { ErrorCode } from './core/errors.js';
export type { BusEvent, StoredEvent } from './core/events.js';
export { createIdGenerator } from './core/ids.js';
export type { IdGenerator } from './core/ids.js';
export { createLogger, createSilentLogger } from './core/logger.js';
export type { Logger } from './core/logger.js';
export { assertMailboxName, isMailboxName, MAILBOX_NAME_PATTERN } from './core/names.js';
export type { Gateway, GatewayAddress } from './gateways/gateway.js';
export { startHub } from './hub/hub.js';
export type { Hub, StartHubOptions } from './hub/hub.js';
export { loadConfig } from './hub/load-config.js';
export { openStore, parseStoreUrl } from './hub/open-store.js';
export type {
  AppendResult,
  DeadLetter,
  Delivery,
  KvChange,
  KvEntry,
  MailboxCounts,
  Store,
  StoredMessage,
} from './store/store.js';
