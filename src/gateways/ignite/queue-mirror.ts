import { createHash, randomBytes } from 'node:crypto';
import type { Bus } from '../../bus/bus.types.js';
import {
  isOneLine,
  MAX_BODY_BYTES,
  PRIORITIES,
  type EnvelopeInput,
  type Priority,
} from '../../core/envelope.js';
import { isMailboxName } from '../../core/names.js';
import { ORIGIN_HEADER } from '../bridging/index.js';
import type { ParsedMime } from './mime/mime-parse.js';
import { nameStamp } from './mime/queue-file-name.js';
import { isQueueFileName } from './ignite-paths.js';

/** Envelope header naming the queue file a bus message mirrors. */
export const FILE_HEADER = 'ignite-file';
/** Envelope header with the earliest delivery time (epoch ms) of a retry re-sent under a new id. */
export const NOT_BEFORE_HEADER = 'ignite-not-before';

const TYPE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
const MAX_HEADER = 4096;

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The bus envelope id of a queue file: its Message-ID made id-safe, or a hash of agent and name. */
export function mirrorIdOf(agent: string, name: string, messageId: string | undefined): string {
  const raw = (messageId ?? '').replace(/^<|>$/g, '');
  if (raw === '') return `f${hash(`${agent}/${name}`)}`;
  const safe = raw.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe.length <= 96 && /^[A-Za-z0-9_]/.test(safe) ? safe : `m${hash(raw)}`;
}

const priorityOf = (value: string | undefined): Priority => PRIORITIES.find((p) => p === value) ?? 'normal';

/**
 * The envelope mirroring one queue file in the recipient's mailbox (spec/ignite.md 4.9). Values that do
 * not fit the envelope schema are kept as `ignite-*` headers (cut to the header limit) instead.
 */
export function mirrorEnvelope(
  agent: string,
  name: string,
  message: ParsedMime,
  nowMs: number,
): EnvelopeInput {
  const h = message.headers;
  const from = h.get('From') ?? '';
  const type = h.get('X-IGNITE-Type') ?? '';
  const thread = h.get('X-IGNITE-Thread-ID') ?? '';
  const stamp = nameStamp(name);
  const headers: Record<string, string> = {
    [FILE_HEADER]: name.slice(0, MAX_HEADER),
    [ORIGIN_HEADER]: 'ignite',
  };
  const keep = (key: string, value: string | undefined): void => {
    if (value !== undefined && value !== '' && isOneLine(value)) headers[key] = value.slice(0, MAX_HEADER);
  };
  keep('ignite-message-id', h.get('Message-ID'));
  keep('ignite-from', from);
  keep('ignite-type', type);
  keep('ignite-to', h.get('To'));
  const isBodyKept = Buffer.byteLength(message.body, 'utf8') <= MAX_BODY_BYTES;
  if (!isBodyKept) headers['ignite-body-omitted'] = 'true';
  return {
    id: mirrorIdOf(agent, name, h.get('Message-ID')),
    from: isMailboxName(from) ? from : 'ignite',
    to: agent,
    type: TYPE_PATTERN.test(type) ? type : 'ignite.message',
    priority: priorityOf(h.get('X-IGNITE-Priority')),
    headers,
    body: isBodyKept ? message.body : '',
    createdAt: stamp === null ? Math.floor(nowMs) : Number(stamp / 1000n),
    ...(thread !== '' && thread.length <= 256 && isOneLine(thread) ? { thread } : {}),
  };
}

interface AgentMirrors {
  readonly byName: Map<string, string>;
  readonly ids: Set<string>;
}

/**
 * Which queue files have a live mirror on the bus, per agent (file name -> envelope id), and the sending
 * of new mirrors. An id already used by another file, or a duplicate the bus remembers (a dead letter
 * with the same Message-ID), gets a suffix so every file appearance is delivered.
 */
export class QueueMirror {
  readonly #bus: Bus;
  readonly #live = new Map<string, AgentMirrors>();

  constructor(options: { readonly bus: Bus }) {
    this.#bus = options.bus;
  }

  #of(agent: string): AgentMirrors {
    let mirrors = this.#live.get(agent);
    if (mirrors === undefined) this.#live.set(agent, (mirrors = { byName: new Map(), ids: new Set() }));
    return mirrors;
  }

  /**
   * Loads the live mirrors of `agent` from its mailbox (start-up). A message whose file header is not a
   * plain file name is no mirror of ours (the agent worker dead-letters it when it arrives): skipped.
   */
  async load(
    agent: string,
  ): Promise<Array<{ readonly name: string; readonly availableAt: number; readonly state: string }>> {
    const found: Array<{ name: string; availableAt: number; state: string }> = [];
    for (const m of await this.#bus.peek(agent)) {
      const name = m.envelope.headers[FILE_HEADER];
      if (name === undefined || !isQueueFileName(name)) continue;
      this.set(agent, name, m.envelope.id);
      found.push({ name, availableAt: m.availableAt, state: m.state });
    }
    return found;
  }

  /** True when `name` of `agent` has a live mirror. */
  has(agent: string, name: string): boolean {
    return this.#of(agent).byName.has(name);
  }

  /** Sends the mirror of a queue file unless it has one; resolves the envelope id. */
  async add(input: EnvelopeInput & { readonly to: string }, name: string): Promise<string> {
    const mirrors = this.#of(input.to);
    const existing = mirrors.byName.get(name);
    if (existing !== undefined) return existing;
    let id = input.id ?? mirrorIdOf(input.to, name, undefined);
    if (mirrors.ids.has(id)) id = `${id}.${hash(name).slice(0, 8)}`;
    let result = await this.#bus.send({ ...input, id });
    if (result.isDuplicate)
      result = await this.#bus.send({ ...input, id: `${id}.${randomBytes(4).toString('hex')}` });
    this.set(input.to, name, result.envelope.id);
    return result.envelope.id;
  }

  /** Records that `name` is mirrored by `id` (start-up, or a retry re-sent under a new id). */
  set(agent: string, name: string, id: string): void {
    const mirrors = this.#of(agent);
    const old = mirrors.byName.get(name);
    if (old !== undefined) mirrors.ids.delete(old);
    mirrors.byName.set(name, id);
    mirrors.ids.add(id);
  }

  /** Forgets the mirror of `name` once its bus message was acked or dead-lettered. */
  settle(agent: string, name: string): void {
    const mirrors = this.#of(agent);
    const id = mirrors.byName.get(name);
    if (id !== undefined) mirrors.ids.delete(id);
    mirrors.byName.delete(name);
  }

  /** Number of live mirrors of `agent`. */
  size(agent: string): number {
    return this.#of(agent).byName.size;
  }
}
