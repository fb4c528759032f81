import { z } from 'zod';
import type { CliContext } from '../cli-context.js';
import { stopSignals } from '../stop-signals.js';

const bubbleSchema = z.object({
  agent: z.string(),
  pet: z.string(),
  text: z.string(),
  bubbleType: z.string(),
  durationMs: z.number(),
});

function clockTime(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}

function petLabel(pet: string): string {
  return /^\d+$/.test(pet) ? `ヤドン${pet}` : pet === 'yadoran' ? 'ヤドラン' : pet;
}

/**
 * `musubi yadon bubbles [--all]`: prints speech bubbles (`agent.bubble` events of the configured
 * store: pet-socket messages and the agents' own) live, one line each, until SIGINT/SIGTERM. `--all`
 * first replays the stored ones.
 */
export async function bubblesCommand(
  ctx: CliContext,
  options: { readonly isReplay: boolean },
): Promise<void> {
  await using opened = await ctx.openBus();
  const { bus } = opened;
  let after = 0;
  if (!options.isReplay) {
    for (
      let page = await bus.readEvents({ after, limit: 1000 });
      page.length > 0;
      page = await bus.readEvents({ after, limit: 1000 })
    ) {
      after = page.at(-1)?.cursor ?? after;
    }
  }
  const stop = stopSignals();
  try {
    for await (const event of bus.events({ after, signal: stop.signal })) {
      if (event.type !== 'agent.bubble' || !('data' in event)) continue;
      const bubble = bubbleSchema.safeParse(event.data);
      if (!bubble.success) continue;
      const b = bubble.data;
      ctx.stdout.write(
        `[${clockTime(event.at)}] ${petLabel(b.pet)} (${b.bubbleType}, ${b.durationMs} ms): ${b.text}\n`,
      );
    }
  } finally {
    stop.dispose();
  }
}
