import { flatten } from './conversation.js';
import { parseLenientJson } from './lenient-json.js';
import { askLlm, type LlmSettings } from './llm-call.js';

/** An active task the new one is compared with. */
export interface ActiveTaskSummary {
  readonly id: string;
  readonly description: string;
}

/** The judge prompt (mentions `duplicate` and `matched`, never the assessment's key words). */
export function duplicatePrompt(candidate: string, active: readonly ActiveTaskSummary[]): string {
  return [
    'Decide whether a NEW background task duplicates one of the ACTIVE tasks of the same conversation',
    '(same goal, even if worded differently).',
    '',
    'ACTIVE tasks:',
    ...active.map((t) => `[${t.id}] ${flatten(t.description)}`),
    '',
    `NEW task: ${flatten(candidate)}`,
    '',
    'Answer with JSON only: [matched_id_or_null, duplicate_boolean]',
  ].join('\n');
}

/** Reads `[matched_id_or_null, duplicate_boolean]` or `{"duplicate", "matched_id"}`; anything else → not a duplicate. */
export function parseDuplicateAnswer(answer: string): boolean {
  const asArray = parseLenientJson(answer, { open: '[' });
  if (Array.isArray(asArray)) return asArray[1] === true;
  const asObject = parseLenientJson(answer);
  if (typeof asObject === 'object' && asObject !== null && Object.hasOwn(asObject, 'duplicate')) {
    return Reflect.get(asObject, 'duplicate') === true;
  }
  return false;
}

/**
 * Asks the LLM whether `candidate` duplicates an active task. No active tasks, any failure or an
 * unreadable answer → false (never rejects).
 */
export async function isDuplicateTask(
  llm: LlmSettings,
  candidate: string,
  active: readonly ActiveTaskSummary[],
  signal?: AbortSignal,
): Promise<boolean> {
  if (active.length === 0) return false;
  const answer = await askLlm(llm, duplicatePrompt(candidate, active), signal);
  return answer.ok && parseDuplicateAnswer(answer.text);
}
