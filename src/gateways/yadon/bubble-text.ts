import { firstCodePoints, hasMoreCodePoints } from '../../core/python/text.js';

/**
 * A speech bubble for one pet (spec yadon.md 3.6 and 3.8). Agents emit them as hub events; a pet UI
 * (or `musubi yadon bubbles`) shows the newest bubble of each pet for `durationMs`.
 */
export interface Bubble {
  /** The pet: `yadoran` or a bare worker number. */
  readonly pet: string;
  readonly text: string;
  /** The bubble type; only `hook` renders differently. */
  readonly bubbleType: string;
  readonly durationMs: number;
}

/** Receives bubbles; must not throw. */
export type BubbleSink = (bubble: Bubble) => void;

/** Type and duration of the bubbles agents emit themselves. */
export const AGENT_BUBBLE_TYPE = 'claude';
export const AGENT_BUBBLE_MS = 5_000;
export const PHASE_BUBBLE_MS = 3_000;

// Python's \w is Unicode-aware: letters, digits and underscore of any script.
const PATH_PATTERN = /\/(?:Users|home|tmp|var|private|opt|etc)(?:\/[\p{L}\p{N}_._-]+)+/gu;

/**
 * `S(text, max)`: every absolute path under a well-known root becomes its last component (hiding user
 * names and folder layouts); then text longer than `max` code points keeps the first `max` plus `...`.
 */
export function shortenForBubble(text: string, max: number): string {
  const short = text.replace(PATH_PATTERN, (path) => path.slice(path.lastIndexOf('/') + 1));
  return hasMoreCodePoints(short, max) ? `${firstCodePoints(short, max)}...` : short;
}

const PHASE_LABELS: Readonly<Record<string, string>> = {
  implement: '実装する',
  docs: 'ドキュメント更新する',
  review: 'レビューする',
};

/** `<label>ヤドン<count>体に依頼`, the bubble the manager shows when a phase starts. */
export function phaseBubbleText(phase: string, count: number): string {
  const label = Object.hasOwn(PHASE_LABELS, phase) ? PHASE_LABELS[phase] : `...${phase}...`;
  return `${label ?? ''}ヤドン${count}体に依頼`;
}

/** The bubble texts of spec yadon.md 3.8. */
export const bubbleTexts = {
  workerReceived: (instruction: string) => `やるやぁん「${shortenForBubble(instruction, 80)}」`,
  workerDone: (summary: string, isSuccess: boolean) =>
    `${isSuccess ? 'できたやぁん' : '失敗やぁん'}「${shortenForBubble(summary, 60)}」`,
  jobReceived: (instruction: string) => `ヤドキングが言ってる「${shortenForBubble(instruction, 80)}」`,
  jobDone: (summary: string, isSuccess: boolean) =>
    `${isSuccess ? 'みんなできた' : '一部失敗した'}「${shortenForBubble(summary, 60)}」`,
} as const;
