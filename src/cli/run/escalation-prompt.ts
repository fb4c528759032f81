import { createInterface } from 'node:readline/promises';
import {
  ESCALATION_CHOICES,
  parseChoice,
  type AskHuman,
  type EscalationChoice,
} from '../../runs/turn-escalations.js';

/**
 * The terminal's answer to a turn the bus gave up on: asks `retry, skip or abort?` on `output` until
 * `input` gives one of them; stops asking (undefined) when the signal aborts — another answer came
 * first — or the input ends.
 */
export function askOnTerminal(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): AskHuman {
  return async (escalation, signal) => {
    const rl = createInterface({ input, output, terminal: false });
    const ended = new Promise<undefined>((resolve) => rl.once('close', () => resolve(undefined)));
    try {
      for (;;) {
        const asked = rl.question(`  ${escalation.title}: ${ESCALATION_CHOICES.join(', ')}? `, { signal });
        const line = await Promise.race([asked, ended]).catch(() => undefined);
        if (line === undefined) return undefined;
        const choice: EscalationChoice | undefined = parseChoice(line);
        if (choice !== undefined) return { choice, by: 'you at the terminal' };
      }
    } finally {
      rl.close();
    }
  };
}

/** A standing answer (`--on-dead-letter skip`): every turn the bus gives up on gets `choice` at once. */
export function answerAlways(choice: EscalationChoice): AskHuman {
  return () => Promise.resolve({ choice, by: `--on-dead-letter ${choice}` });
}
