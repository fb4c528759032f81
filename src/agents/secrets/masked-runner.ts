import { MusubiError } from '../../core/errors.js';
import type { SecretMask } from '../../core/secret-mask.js';
import type { AgentRunInput, AgentRunner, AgentRunResult } from '../agent-runner.js';

/**
 * The error a turn rejected with, masked: the same error when neither its message nor its details hold
 * a secret, else a copy with both masked and without its cause (which may hold the secret in full).
 */
function maskedError(err: unknown, mask: SecretMask): unknown {
  if (typeof err === 'string') return mask.mask(err);
  if (!(err instanceof Error)) return err;
  const message = mask.mask(err.message);
  if (err instanceof MusubiError) {
    const details = mask.maskDeep(err.details);
    if (message === err.message && details === err.details) return err;
    return new MusubiError(err.code, message, details === undefined ? {} : { details });
  }
  if (message === err.message) return err;
  const copy = new Error(message);
  copy.name = err.name;
  return copy;
}

/**
 * Wraps a runner so nothing it reports holds a secret of `mask`: every event is masked before it reaches
 * `onEvent`, every string of the result (text, stderr tail, error message, session) before it is
 * returned, and the message of an error it rejects with, so the turn log, transcripts, run records,
 * events, the terminal and the HTTP API only ever see masked text. The prompt reaches the agent as it
 * is. Returns `runner` itself when the mask is empty.
 */
export function withSecretMask(runner: AgentRunner, mask: SecretMask): AgentRunner {
  if (mask.isEmpty) return runner;
  return {
    backend: runner.backend,
    available: async () => mask.maskDeep(await runner.available()),
    async run(input: AgentRunInput): Promise<AgentRunResult> {
      const { onEvent } = input;
      const masked: AgentRunInput =
        onEvent === undefined ? input : { ...input, onEvent: (event) => onEvent(mask.maskDeep(event)) };
      try {
        return mask.maskDeep(await runner.run(masked));
      } catch (err) {
        throw maskedError(err, mask);
      }
    },
  };
}
