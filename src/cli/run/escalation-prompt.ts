import { createInterface } from 'node:readline';
import {
  ESCALATION_CHOICES,
  parseChoice,
  type AskHuman,
  type EscalationChoice,
} from '../../runs/turn-escalations.js';

/**
 * The terminal's answer to a turn the bus gave up on: asks `retry, skip, abort?` on `output` until a
 * line of `input` names one of them; stops asking (undefined) when the signal aborts — another answer
 * came first — or the input ends.
 */
export function askOnTerminal(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): AskHuman {
  return async (escalation, signal) => {
    if (signal.aborted) return undefined;
    const rl = createInterface({ input, terminal: false });
    const onAbort = (): void => rl.close();
    signal.addEventListener('abort', onAbort, { once: true });
    const prompt = (): void => void output.write(`  ${escalation.title}: ${ESCALATION_CHOICES.join(', ')}? `);
    try {
      prompt();
      for await (const line of rl) {
        const choice: EscalationChoice | undefined = parseChoice(line);
        if (choice !== undefined) return { choice, by: 'you at the terminal' };
        prompt();
      }
      return undefined;
    } finally {
      signal.removeEventListener('abort', onAbort);
      rl.close();
    }
  };
}

/** A standing answer (`--on-dead-letter skip`): every turn the bus gives up on gets `choice` at once. */
export function answerAlways(choice: EscalationChoice): AskHuman {
  return () => Promise.resolve({ choice, by: `--on-dead-letter ${choice}` });
}
