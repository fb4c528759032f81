import {
  assistantFingerprint,
  messageSignature,
  userTurnFingerprint,
  type ChatMessage,
} from './conversation.js';
import type { SessionMemory } from './session-memory.js';

/** Proactive analyses allowed per session key until a restore signal with `new_session: true`. */
export const MAX_PROACTIVE_PER_SESSION = 2;
/** An `external_intent` below this gates the request unless a deterministic signal exists. */
export const EXTERNAL_INTENT_FLOOR = 0.2;

/** One finished conversation turn handed to the executor. */
export interface AnalyzeInput {
  /** The session key (`lanlan_name`, trimmed; `__default__` when empty). */
  readonly sessionKey: string;
  readonly trigger: 'turn_end' | 'session_end';
  readonly messages: readonly ChatMessage[];
  readonly conversationId?: string;
  readonly externalIntent?: number;
  readonly isProactive: boolean;
  readonly language?: string;
}

/** Whether a turn goes on to assessment, and the fingerprints it is tracked by. */
export type IntakeVerdict =
  | { readonly go: true; readonly fingerprint: string; readonly triggerSignature: string }
  | { readonly go: false; readonly why: string };

/** Settings of {@link admitTurn}. */
export interface IntakeOptions {
  readonly isProactiveEnabled: boolean;
  /** True when a plugin keyword matches, a keyword-less plugin is dispatchable, or the catalogue is not loaded. */
  readonly hasDeterministicSignal: (latestUserText: string) => boolean;
}

function latestUserSignature(messages: readonly ChatMessage[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  return last === undefined ? '' : messageSignature(last);
}

/**
 * Steps 3–5 of spec neko.md 4.1: the proactive budget and fingerprint, the user-turn fingerprint (which
 * also absorbs the publish retry of the main side) and the external-intent pre-gate. Consumes the
 * fingerprint / reserves the proactive slot in `sessions` when the turn is admitted that far.
 */
export function admitTurn(
  input: AnalyzeInput,
  sessions: SessionMemory,
  options: IntakeOptions,
): IntakeVerdict {
  const session = sessions.get(input.sessionKey);
  let fingerprint: string;
  if (input.isProactive) {
    if (!options.isProactiveEnabled) return { go: false, why: 'proactive analysis disabled' };
    const fp = assistantFingerprint(input.messages);
    if (fp === null) return { go: false, why: 'no assistant message' };
    if (fp === session.proactiveFingerprint) return { go: false, why: 'same proactive turn' };
    if (session.proactiveCount >= MAX_PROACTIVE_PER_SESSION)
      return { go: false, why: 'proactive budget used' };
    sessions.update(input.sessionKey, (s) => ({
      ...s,
      proactiveFingerprint: fp,
      proactiveCount: s.proactiveCount + 1,
    }));
    fingerprint = fp;
  } else {
    const fp = userTurnFingerprint(input.messages);
    if (fp === null) return { go: false, why: 'no user message' };
    if (fp === session.consumedFingerprint) return { go: false, why: 'no new user turn' };
    sessions.update(input.sessionKey, (s) => ({ ...s, consumedFingerprint: fp }));
    fingerprint = fp;
  }
  if (input.externalIntent !== undefined && input.externalIntent < EXTERNAL_INTENT_FLOOR) {
    const latest = input.messages.findLast((m) => m.role === 'user')?.text ?? '';
    if (!options.hasDeterministicSignal(latest)) return { go: false, why: 'low external intent' };
  }
  return { go: true, fingerprint, triggerSignature: latestUserSignature(input.messages) };
}
