import { z } from 'zod';
import { pyStr } from '../../core/python/repr.js';
import { resultDoc, type CollectedEntry, type ResultDoc } from './result-doc.js';

const payloadSchema = z.record(z.string(), z.unknown());

function field(entry: CollectedEntry, key: string, fallback: string): string {
  return Object.hasOwn(entry, key) ? pyStr(entry[key]) : fallback;
}

function payloadField(entry: CollectedEntry, key: 'summary' | 'output'): string {
  const payload = payloadSchema.safeParse(entry['payload']);
  if (!payload.success || !Object.hasOwn(payload.data, key)) return '';
  return pyStr(payload.data[key]);
}

/**
 * Aggregates the collected entries of a job, already in phase then subtask order (spec yadon.md
 * 4.3.3): summary lines `[<from>] <status>: <summary>`, output blocks `=== <from> (<status>) ===\n<output>`
 * joined by a blank line; missing `from`/`status` read `unknown`, missing texts are empty. The status is
 * `success` iff every entry says `success` (also with no entries), else `partial_error` — never `error`.
 */
export function aggregateResults(jobId: string, entries: readonly CollectedEntry[]): ResultDoc {
  const rows = entries.map((e) => ({
    from: field(e, 'from', 'unknown'),
    status: field(e, 'status', 'unknown'),
    summary: payloadField(e, 'summary'),
    output: payloadField(e, 'output'),
  }));
  const isSuccess = entries.every((e) => e['status'] === 'success');
  return resultDoc({
    id: jobId,
    from: 'yadoran',
    status: isSuccess ? 'success' : 'partial_error',
    payload: {
      output: rows.map((r) => `=== ${r.from} (${r.status}) ===\n${r.output}`).join('\n\n'),
      summary: rows.map((r) => `[${r.from}] ${r.status}: ${r.summary}`).join('\n'),
    },
  });
}
