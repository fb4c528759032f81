import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** Token totals of a codex thread (input includes cached input, as codex counts them). */
export interface CodexTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** A rollout larger than this is not read for usage (a session that long is reported without it). */
const MAX_ROLLOUT_BYTES = 64 * 1024 * 1024;
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const count = z.number().nonnegative().catch(0);
const rolloutLine = z.object({
  type: z.literal('event_msg'),
  payload: z.union([
    z.object({ type: z.literal('task_started') }),
    z.object({
      type: z.literal('token_count'),
      info: z
        .object({ total_token_usage: z.object({ input_tokens: count, output_tokens: count }) })
        .nullish(),
    }),
  ]),
});

function newestFirst(names: string[]): string[] {
  return names.sort().reverse();
}

function subdirs(dir: string): string[] {
  try {
    return newestFirst(
      readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    );
  } catch {
    // No such folder (no session was ever saved there).
    return [];
  }
}

/**
 * The rollout file of a thread: `<codexHome>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, where
 * codex 0.171 appends every turn of the thread (a resumed one too). Newest days are searched first.
 */
export function findRollout(codexHome: string, threadId: string): string | undefined {
  if (!THREAD_ID.test(threadId)) return undefined;
  const suffix = `-${threadId}.jsonl`;
  const root = join(codexHome, 'sessions');
  for (const year of subdirs(root)) {
    for (const month of subdirs(join(root, year))) {
      for (const day of subdirs(join(root, year, month))) {
        const dir = join(root, year, month, day);
        let names: string[];
        try {
          names = readdirSync(dir);
        } catch {
          // Removed while searching.
          continue;
        }
        const name = names.find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
        if (name !== undefined) return join(dir, name);
      }
    }
  }
  return undefined;
}

/**
 * The thread's token totals before its last `turns` turns, read from its rollout: the running total of
 * the last `token_count` event before the first of those turns' `task_started` (zero when none). Undefined
 * when the rollout is missing, too large or has fewer turns. Codex reports session totals in
 * `turn.completed`, so this is what a resumed turn's own usage is measured from.
 */
export function totalsBeforeLastTurns(rolloutPath: string, turns: number): CodexTotals | undefined {
  let text: string;
  try {
    if (statSync(rolloutPath).size > MAX_ROLLOUT_BYTES) return undefined;
    text = readFileSync(rolloutPath, 'utf8');
  } catch {
    // Unreadable (removed, or owned by another user): no baseline.
    return undefined;
  }
  // The totals in force when each turn started, in order.
  const atStart: CodexTotals[] = [];
  let total: CodexTotals = { inputTokens: 0, outputTokens: 0 };
  for (const line of text.split('\n')) {
    // Cheap filter first: a rollout holds whole conversations, only these two events matter.
    if (!line.includes('"task_started"') && !line.includes('"token_count"')) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      // A torn last line of a rollout still being written.
      continue;
    }
    const parsed = rolloutLine.safeParse(raw);
    if (!parsed.success) continue;
    const p = parsed.data.payload;
    if (p.type === 'task_started') atStart.push(total);
    else if (p.info)
      total = {
        inputTokens: p.info.total_token_usage.input_tokens,
        outputTokens: p.info.total_token_usage.output_tokens,
      };
  }
  return turns >= 1 && atStart.length >= turns ? atStart[atStart.length - turns] : undefined;
}
