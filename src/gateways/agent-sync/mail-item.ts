import type { Envelope, EnvelopeInput } from '../../core/envelope.js';
import { isMailboxName } from '../../core/names.js';
import { pyJson } from '../../core/python/json-dumps.js';
import { JsonNumber, isJsonObject, parseJson, type JsonValue } from '../../core/python/json-loads.js';
import { pyFloatRepr } from '../../core/python/numbers.js';
import { agentSyncTextOf, ORIGIN_HEADER, originHeaders } from '../bridging/index.js';

/** Largest serialised mailbox item, discussion entry or test result (bytes of UTF-8). */
export const MAX_ITEM_BYTES = 61_000;

/** Marks an envelope whose body is the complete agent_sync item as JSON (values the bus cannot carry). */
export const ITEM_HEADER = 'x-agent-sync-item';

const MESSAGE_TYPE = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** One agent_sync mailbox message: exactly `{from, type, text, ts}`. */
export interface MailItem {
  readonly from: JsonValue;
  readonly type: JsonValue;
  readonly text: JsonValue;
  readonly tsMs: number;
}

/** A mailbox message as it appears in a listen reply: its JSON text and UTF-8 size. */
export interface RenderedItem {
  readonly json: string;
  readonly bytes: number;
}

/** Seconds since the epoch as a float, as agent_sync writes every timestamp. */
export function seconds(ms: number): JsonNumber {
  return JsonNumber.float(ms / 1000);
}

/** `pyJson(seconds(ms))`, without rendering the float to a token and parsing it back. */
function secondsJson(ms: number): string {
  const value = ms / 1000;
  return Number.isFinite(value) ? pyFloatRepr(value) : '0.0';
}

/** Renders an item exactly as a listen reply shows it. */
export function renderItem(item: MailItem): RenderedItem {
  // pyJson({from, type, text, ts}) written out: every send renders one, and so does every listen for
  // mail that came in as a plain envelope.
  const from = pyJson(item.from);
  const type = pyJson(item.type);
  const text = pyJson(item.text);
  const json = `{"from": ${from}, "type": ${type}, "text": ${text}, "ts": ${secondsJson(item.tsMs)}}`;
  return { json, bytes: Buffer.byteLength(json, 'utf8') };
}

/**
 * The envelope that carries `item` to bus mailbox `to`. Items the bus can carry natively (string
 * sender that is a valid name, string type, string text) travel as a plain envelope, so other gateways
 * read them naturally; anything else travels as its JSON text under {@link ITEM_HEADER}.
 */
export function itemEnvelope(to: string, item: MailItem, rendered: RenderedItem): EnvelopeInput {
  const { from, type, text } = item;
  const isFromPlain = typeof from === 'string' && isMailboxName(from);
  const isTypePlain = typeof type === 'string' && MESSAGE_TYPE.test(type);
  if (isFromPlain && isTypePlain && typeof text === 'string' && !LONE_SURROGATE.test(text)) {
    return { from, to, type, body: text, headers: originHeaders('agent-sync'), createdAt: item.tsMs };
  }
  return {
    from: isFromPlain ? from : 'agent-sync',
    to,
    type: isTypePlain ? type : 'message',
    body: rendered.json,
    headers: { [ITEM_HEADER]: 'json', [ORIGIN_HEADER]: 'agent-sync' },
    createdAt: item.tsMs,
  };
}

/**
 * How a bus envelope appears in a listen reply: its JSON item when it carries one, else
 * `{from, type, text, ts: createdAt}` with text = the body (mail from other gateways: see
 * bridging/agent-sync-text.ts).
 */
export function envelopeItem(envelope: Envelope): RenderedItem {
  if (envelope.headers[ITEM_HEADER] === 'json') {
    const parsed = parseJson(envelope.body);
    if (parsed.ok && isJsonObject(parsed.value)) {
      // Another sender may have set the header on pretty-printed JSON: a line break would split the
      // NDJSON reply, so such a body is rendered again on one line (ours never has one).
      const json = /[\r\n]/.test(envelope.body) ? pyJson(parsed.value) : envelope.body;
      return { json, bytes: Buffer.byteLength(json, 'utf8') };
    }
  }
  const { from, type, text } = agentSyncTextOf(envelope);
  return renderItem({ from, type, text, tsMs: envelope.createdAt });
}
