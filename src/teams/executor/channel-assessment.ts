import { z } from 'zod';
import { flatten } from './conversation.js';
import { parseLenientJson } from './lenient-json.js';
import { askLlm, type LlmSettings } from './llm-call.js';

/** One channel as offered to the assessment. */
export interface ChannelOffer {
  readonly id: string;
  readonly description: string;
}

/** The assessment's verdict on one channel. */
export interface ChannelVerdict {
  readonly canExecute: boolean;
  readonly taskDescription: string;
  readonly reason: string;
}

/** Verdicts by channel id (only offered ids), or the reason there are none. */
export type AssessmentResult =
  | { readonly ok: true; readonly verdicts: ReadonlyMap<string, ChannelVerdict> }
  | { readonly ok: false; readonly reason: string };

const verdictSchema = z.object({
  can_execute: z.unknown(),
  task_description: z.unknown().optional(),
  reason: z.unknown().optional(),
});

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/**
 * The assessment prompt. Channels are listed as `- <id>: <description>` lines before the conversation
 * (which starts `LATEST_USER_REQUEST:`), the format the scripted agent reads (docs/agents.md).
 */
export function assessmentPrompt(offers: readonly ChannelOffer[], conversation: string): string {
  const ids = offers.map((o) => JSON.stringify(o.id)).join(', ');
  return [
    'You decide whether the latest user request of a conversation asks for something one of these executor',
    'channels can actually do in the background.',
    '',
    'Channels:',
    ...offers.map((o) => `- ${o.id}: ${flatten(o.description)}`),
    '',
    'Rules:',
    '1. Pure chat, greetings, opinions or factual questions: every channel gets "can_execute": false.',
    '2. At most two channels get "can_execute": true, and two only when they are equally good.',
    '3. task_description is a brief, self-contained instruction for the channel.',
    `4. Answer with strict JSON only, with exactly these keys: ${ids}. Shape:`,
    '{"<channel id>": {"can_execute": true, "task_description": "brief description", "reason": "why"}, ...}',
    '',
    'Conversation:',
    conversation,
  ].join('\n');
}

/** Reads an assessment answer: known ids only; null when it is not a JSON object. */
export function parseAssessment(answer: string, ids: readonly string[]): Map<string, ChannelVerdict> | null {
  const value = parseLenientJson(answer);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const verdicts = new Map<string, ChannelVerdict>();
  for (const [id, raw] of Object.entries(value)) {
    if (!ids.includes(id)) continue;
    const parsed = verdictSchema.safeParse(raw);
    if (!parsed.success) continue;
    verdicts.set(id, {
      canExecute: parsed.data.can_execute === true || parsed.data.can_execute === 'true',
      taskDescription: text(parsed.data.task_description),
      reason: text(parsed.data.reason),
    });
  }
  return verdicts;
}

/** Runs ONE assessment call over `offers`. Never rejects. */
export async function assessChannels(
  llm: LlmSettings,
  offers: readonly ChannelOffer[],
  conversation: string,
  signal?: AbortSignal,
): Promise<AssessmentResult> {
  if (offers.length === 0) return { ok: true, verdicts: new Map() };
  const answer = await askLlm(llm, assessmentPrompt(offers, conversation), signal);
  if (!answer.ok) return answer;
  const verdicts = parseAssessment(
    answer.text,
    offers.map((o) => o.id),
  );
  return verdicts === null
    ? { ok: false, reason: 'assessment failed: the answer is not a JSON object' }
    : { ok: true, verdicts };
}
