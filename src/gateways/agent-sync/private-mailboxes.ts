import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import { MusubiError } from '../../core/errors.js';
import { takeWithinBudget, type Reservation } from './reservation.js';

const boxSchema = z.strictObject({
  label: z.string(),
  nextSeq: z.number().int().nonnegative(),
  items: z.array(z.strictObject({ seq: z.number().int(), json: z.string(), bytes: z.number().int() })),
});
type Box = z.infer<typeof boxSchema>;

interface CachedBox {
  box: Box;
  revision: number;
  readonly reserved: Set<number>;
}

/**
 * Mailboxes for agent_sync names the bus cannot name (`"agent a"`, `5`, `null`): one KV value per name
 * under `<prefix>/<digest>`, holding the rendered items. Only this gateway reads or writes them. An
 * emptied mailbox's key is deleted, so unknown names never persist anything.
 */
export class PrivateMailboxes {
  readonly #kv: KvState;
  readonly #prefix: string;
  readonly #cache = new Map<string, CachedBox>();

  constructor(options: { readonly kv: KvState; readonly prefix: string }) {
    this.#kv = options.kv;
    this.#prefix = options.prefix;
  }

  async enqueue(digest: string, label: string, item: { json: string; bytes: number }): Promise<void> {
    const cached = await this.#load(digest, label, true);
    const box: Box = {
      label,
      nextSeq: cached.box.nextSeq + 1,
      items: [...cached.box.items, { seq: cached.box.nextSeq, ...item }],
    };
    await this.#write(digest, cached, box);
  }

  async pending(digest: string): Promise<number> {
    return (await this.#load(digest, '', false)).box.items.length;
  }

  async reserve(digest: string, mailboxKey: string): Promise<Reservation | null> {
    const cached = await this.#load(digest, '', false);
    const candidates = cached.box.items
      .filter((i) => !cached.reserved.has(i.seq))
      .map((i) => ({ seq: i.seq, item: { json: i.json, bytes: i.bytes } }));
    const taken = takeWithinBudget(candidates);
    if (taken.length === 0) return null;
    const seqs = new Set(taken.map((t) => t.seq));
    for (const seq of seqs) cached.reserved.add(seq);
    const unreserve = (): void => seqs.forEach((seq) => cached.reserved.delete(seq));
    return {
      mailboxKey,
      items: taken.map((t) => t.item),
      commit: async () => {
        unreserve();
        const now = await this.#load(digest, '', true);
        await this.#write(digest, now, { ...now.box, items: now.box.items.filter((i) => !seqs.has(i.seq)) });
      },
      commitsAlone: false,
      release: async () => unreserve(),
    };
  }

  /** Deletes every private mailbox (fresh start). */
  async clear(): Promise<void> {
    for (const entry of await this.#kv.kvList(`${this.#prefix}/`)) await this.#kv.kvDelete(entry.key);
    this.#cache.clear();
  }

  /** The box from cache or KV; an empty box is cached only when about to be written (`isWrite`). */
  async #load(digest: string, label: string, isWrite: boolean): Promise<CachedBox> {
    const cached = this.#cache.get(digest);
    if (cached !== undefined) return cached;
    const entry = await this.#kv.kvGet(`${this.#prefix}/${digest}`);
    let box: Box = { label, nextSeq: 0, items: [] };
    if (entry !== null) {
      const parsed = boxSchema.safeParse(entry.value);
      if (!parsed.success) throw new MusubiError('STORE_CORRUPT', `private mailbox ${digest} is not valid`);
      box = parsed.data;
    }
    const fresh: CachedBox = { box, revision: entry?.revision ?? 0, reserved: new Set() };
    if (entry !== null || isWrite) this.#cache.set(digest, fresh);
    return fresh;
  }

  async #write(digest: string, cached: CachedBox, box: Box): Promise<void> {
    const key = `${this.#prefix}/${digest}`;
    if (box.items.length === 0) {
      await this.#kv.kvDelete(key, { expectedRevision: cached.revision });
      cached.revision = 0;
    } else {
      cached.revision = (await this.#kv.kvSet(key, box, { expectedRevision: cached.revision })).revision;
    }
    cached.box = box;
    if (box.items.length === 0 && cached.reserved.size === 0) this.#cache.delete(digest);
  }
}
