import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseJsonLine } from '../cli/json-line.js';

/** Token totals of a copilot session as its accounting reports them. */
export interface CopilotTokens {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

const count = z.number().nonnegative().catch(0);

// The accounting snapshot copilot 1.0.102 writes to `--usage-output-file` and into the `session.shutdown`
// event of its events file: per model, `usage.inputTokens` / `usage.outputTokens` (cache reads and writes
// are counted separately, already inside inputTokens on the OpenAI wire). Only those fields are read.
const snapshotSchema = z.object({
  modelMetrics: z.record(
    z.string(),
    z.object({
      usage: z.object({ inputTokens: count, outputTokens: count }).partial().default({}),
    }),
  ),
});

const shutdownSchema = z.object({
  type: z.literal('session.shutdown'),
  data: z.object({ accountingSnapshot: snapshotSchema }),
});

function totalsOf(snapshot: z.infer<typeof snapshotSchema>): CopilotTokens {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const metrics of Object.values(snapshot.modelMetrics)) {
    inputTokens += metrics.usage.inputTokens ?? 0;
    outputTokens += metrics.usage.outputTokens ?? 0;
  }
  return { inputTokens, outputTokens };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // Missing (the CLI failed before writing it, or the session is new) or unreadable: no numbers.
    return undefined;
  }
}

/**
 * The session totals in a `--usage-output-file`. Copilot writes the totals of the whole SESSION there,
 * earlier turns of a resumed session included, so a turn's own share is this minus the totals before it.
 */
export function readUsageFile(file: string): CopilotTokens | undefined {
  const text = readText(file);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Half-written (the CLI was killed while writing): treated as absent.
    return undefined;
  }
  const parsed = snapshotSchema.safeParse(json);
  return parsed.success ? totalsOf(parsed.data) : undefined;
}

/**
 * The session totals recorded by the last run of a session: the accounting snapshot of the last
 * `session.shutdown` in its events file (copilot appends one at the end of every run). Undefined when
 * the file or such an event is missing.
 */
export function readSessionTotals(eventsFile: string): CopilotTokens | undefined {
  const text = readText(eventsFile);
  if (text === undefined) return undefined;
  let last: CopilotTokens | undefined;
  for (const line of text.split('\n')) {
    if (!line.includes('"session.shutdown"')) continue;
    const parsed = shutdownSchema.safeParse(parseJsonLine(line));
    if (parsed.success) last = totalsOf(parsed.data.data.accountingSnapshot);
  }
  return last;
}

/** Where copilot keeps its config and sessions for an environment: `$COPILOT_HOME`, else `~/.copilot`. */
export function copilotHome(env: Readonly<Record<string, string>>): string | undefined {
  const explicit = env['COPILOT_HOME'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const home = env['HOME'];
  return home === undefined || home === '' ? undefined : join(home, '.copilot');
}

/** The events file of one session under a copilot home. */
export function sessionEventsFile(home: string, sessionId: string): string {
  return join(home, 'session-state', sessionId, 'events.jsonl');
}

/** `total - before`, never below zero (a reset or compacted session must not give negative usage). */
export function tokensSince(total: CopilotTokens, before: CopilotTokens): CopilotTokens {
  return {
    inputTokens: Math.max(0, total.inputTokens - before.inputTokens),
    outputTokens: Math.max(0, total.outputTokens - before.outputTokens),
  };
}
