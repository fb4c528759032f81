import { createHash } from 'node:crypto';
import { isMailboxName } from '../../core/names.js';
import { isJsonArray, isJsonObject, type JsonValue } from '../../core/python/json-loads.js';
import { pyFloatRepr } from '../../core/python/numbers.js';
import { pyRepr } from '../../core/python/repr.js';

/**
 * Where an agent_sync name's mail lives. A string that is a valid bus mailbox name is a bus mailbox
 * (other gateways can deliver into it); any other hashable value (odd strings, numbers, booleans, null)
 * gets a gateway-private mailbox kept in KV under a digest of its identity.
 */
export type MailboxAddress =
  | { readonly kind: 'bus'; readonly key: string; readonly mailbox: string }
  | { readonly kind: 'private'; readonly key: string; readonly digest: string; readonly label: string };

/**
 * The identity of a hashable JSON value under Python's `==`/`hash` rules: `1`, `1.0` and `true` are the
 * same key, `"1"` is not. Resolves `unhashable` for arrays and objects.
 */
export function hashKey(v: JsonValue): { readonly key: string } | { readonly unhashable: 'list' | 'dict' } {
  if (isJsonArray(v)) return { unhashable: 'list' };
  if (isJsonObject(v)) return { unhashable: 'dict' };
  if (typeof v === 'string') return { key: `s:${v}` };
  if (v === null) return { key: 'None' };
  if (typeof v === 'boolean') return { key: v ? 'n:1' : 'n:0' };
  if (v.isInteger) return { key: `n:${BigInt(v.token).toString()}` };
  const x = v.value;
  return { key: Number.isInteger(x) ? `n:${BigInt(x).toString()}` : `n:${pyFloatRepr(x)}` };
}

/** The mailbox of a name, or the unhashable type name for arrays and objects. */
export function mailboxAddress(v: JsonValue): MailboxAddress | { readonly unhashable: 'list' | 'dict' } {
  const hashed = hashKey(v);
  if ('unhashable' in hashed) return hashed;
  if (typeof v === 'string' && isMailboxName(v)) return { kind: 'bus', key: hashed.key, mailbox: v };
  const digest = createHash('sha256').update(hashed.key).digest('hex');
  return { kind: 'private', key: hashed.key, digest, label: pyRepr(v) };
}

/** The address of a string name (never unhashable). */
export function stringAddress(name: string): MailboxAddress {
  const address = mailboxAddress(name);
  if ('unhashable' in address) throw new TypeError('a string is always hashable');
  return address;
}

/** An address with what commands on it alone need, made once. */
export interface KnownAddress {
  readonly address: MailboxAddress;
  /** `[address.key]`: the lock keys of a command on this mailbox alone. */
  readonly keys: readonly string[];
  /** `[address]`: the delivery targets of a message to this mailbox alone. */
  readonly targets: readonly MailboxAddress[];
}

/** The {@link KnownAddress} of `address`. */
export function knownAddress(address: MailboxAddress): KnownAddress {
  return { address, keys: [address.key], targets: [address] };
}

/** Names remembered at most before the book starts over (names come from requests). */
const MAX_KNOWN = 4_096;

/**
 * The addresses of string names, worked out once per name (a name's address never changes): most
 * requests name one of a handful of agents, and hashing and classifying the name again for each of them
 * would be wasted. Bounded: past {@link MAX_KNOWN} names it forgets them all and starts over.
 */
export class AddressBook {
  readonly #known = new Map<string, KnownAddress>();

  /**
   * The address of any name a request carries: a string through {@link AddressBook.of}, other values
   * (rare) worked out each time; the unhashable type name for arrays and objects.
   */
  lookup(v: JsonValue): KnownAddress | { readonly unhashable: 'list' | 'dict' } {
    if (typeof v === 'string') return this.of(v);
    const address = mailboxAddress(v);
    return 'unhashable' in address ? address : knownAddress(address);
  }

  /** The address of `name` and its lock keys. */
  of(name: string): KnownAddress {
    let known = this.#known.get(name);
    if (known === undefined) {
      known = knownAddress(stringAddress(name));
      if (this.#known.size >= MAX_KNOWN) this.#known.clear();
      this.#known.set(name, known);
    }
    return known;
  }
}
