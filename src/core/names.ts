import { MusubiError } from './errors.js';

/**
 * A mailbox (agent) name. It later becomes a folder name and a socket file name, so the pattern allows
 * no separators, no leading dot and no control characters.
 */
export const MAILBOX_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** A key-value key: NATS KV compatible (letters, digits, `_ - = / .`), never starting or ending with `.`. */
export const KV_KEY_PATTERN = /^[A-Za-z0-9_=/-](?:[A-Za-z0-9_=./-]{0,253}[A-Za-z0-9_=/-])?$/;

function describe(value: unknown): string {
  if (typeof value !== 'string') return `a ${typeof value}`;
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/** True when `name` is a valid mailbox name. */
export function isMailboxName(name: unknown): name is string {
  return typeof name === 'string' && MAILBOX_NAME_PATTERN.test(name);
}

/** Returns `name` unchanged or throws `MAILBOX_NAME_INVALID`. */
export function assertMailboxName(name: unknown): string {
  if (isMailboxName(name)) return name;
  throw new MusubiError(
    'MAILBOX_NAME_INVALID',
    `invalid mailbox name ${describe(name)}: must match ${MAILBOX_NAME_PATTERN.source}`,
  );
}

/** Returns `key` unchanged or throws `KV_KEY_INVALID`. */
export function assertKvKey(key: unknown): string {
  if (typeof key === 'string' && KV_KEY_PATTERN.test(key) && !key.includes('..')) return key;
  throw new MusubiError(
    'KV_KEY_INVALID',
    `invalid key ${describe(key)}: must match ${KV_KEY_PATTERN.source}`,
  );
}
