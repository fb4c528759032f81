import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import { MusubiError } from '../../core/errors.js';
import { discussionEntrySchema, type DiscussionEntry } from './rounds-state.js';

/** Entries per stored page; a page is also closed once its labels pass {@link PAGE_BYTES}. */
const PAGE_ENTRIES = 64;
const PAGE_BYTES = 256 * 1024;
const pageSchema = z.array(discussionEntrySchema);

/**
 * The append-only discussion log of a rounds team, stored in KV pages (`<prefix>/000001`, ...) so an
 * append rewrites only the last page. All entries are also kept in memory for reads.
 */
export class DiscussionLog {
  readonly #kv: KvState;
  readonly #prefix: string;
  #entries: DiscussionEntry[] = [];
  #lastPage = { index: 0, size: 0, bytes: 0, revision: 0 };

  constructor(options: { readonly kv: KvState; readonly prefix: string }) {
    this.#kv = options.kv;
    this.#prefix = options.prefix;
  }

  /** Every entry, oldest first. */
  entries(): readonly DiscussionEntry[] {
    return this.#entries;
  }

  /** Reads every page. Throws STORE_CORRUPT when a page does not match the schema. */
  async load(): Promise<void> {
    const pages = await this.#kv.kvList(`${this.#prefix}/`);
    this.#entries = [];
    this.#lastPage = { index: 0, size: 0, bytes: 0, revision: 0 };
    for (const page of pages) {
      const parsed = pageSchema.safeParse(page.value);
      const index = Number(page.key.slice(this.#prefix.length + 1));
      if (!parsed.success || !Number.isInteger(index)) {
        throw new MusubiError('STORE_CORRUPT', `discussion page ${page.key} is not valid`);
      }
      this.#entries.push(...parsed.data);
      const bytes = parsed.data.reduce((n, e) => n + e.label.length, 0);
      this.#lastPage = { index, size: parsed.data.length, bytes, revision: page.revision };
    }
  }

  /** Appends one entry (committed to the store before it resolves). */
  async append(entry: DiscussionEntry): Promise<void> {
    let { index, size, bytes, revision } = this.#lastPage;
    if (index === 0 || size >= PAGE_ENTRIES || bytes >= PAGE_BYTES) {
      [index, size, bytes, revision] = [index + 1, 0, 0, 0];
    }
    const page = [...this.#entries.slice(this.#entries.length - size), entry];
    const written = await this.#kv.kvSet(this.#key(index), page, { expectedRevision: revision });
    this.#entries.push(entry);
    this.#lastPage = { index, size: size + 1, bytes: bytes + entry.label.length, revision: written.revision };
  }

  /** Deletes every page. */
  async clear(): Promise<void> {
    for (const page of await this.#kv.kvList(`${this.#prefix}/`)) await this.#kv.kvDelete(page.key);
    this.#entries = [];
    this.#lastPage = { index: 0, size: 0, bytes: 0, revision: 0 };
  }

  #key(index: number): string {
    return `${this.#prefix}/${String(index).padStart(6, '0')}`;
  }
}
