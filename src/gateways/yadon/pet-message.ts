import { z } from 'zod';
import { pyIntOf } from '../../core/python/numbers.js';
import { pyStr } from '../../core/python/repr.js';

/** Largest pet message read; more is dropped (spec yadon.md 2.4). */
export const MAX_PET_MESSAGE_BYTES = 65_536;
/** Defaults of a pet message (spec yadon.md 3.6). */
const DEFAULT_PET_TYPE = 'normal';
const DEFAULT_PET_DURATION_MS = 4_000;

const messageSchema = z.record(z.string(), z.unknown());
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A bubble request read from a pet socket. */
export interface PetMessage {
  readonly text: string;
  readonly bubbleType: string;
  readonly durationMs: number;
}

/**
 * Decodes `{"text", "type", "duration"}` (spec yadon.md 3.6). `type` defaults to `normal`, `duration`
 * to 4000 and is converted like Python `int()`. Returns undefined for everything the pet ignores:
 * invalid UTF-8 or JSON, a non-object, a missing, empty or non-string `text`, an unconvertible duration.
 */
export function parsePetMessage(bytes: Uint8Array): PetMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    // Bad input on a pet socket is dropped silently, as yadon-agents does.
    return undefined;
  }
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success || Array.isArray(value)) return undefined;
  const { text } = parsed.data;
  if (typeof text !== 'string' || text === '') return undefined;
  const type = Object.hasOwn(parsed.data, 'type') ? pyStr(parsed.data['type']) : DEFAULT_PET_TYPE;
  const durationMs = Object.hasOwn(parsed.data, 'duration')
    ? pyIntOf(parsed.data['duration'])
    : DEFAULT_PET_DURATION_MS;
  if (durationMs === undefined) return undefined;
  return { text, bubbleType: type, durationMs };
}
