import { z } from 'zod';
import { pyStr } from '../../core/python/repr.js';
import { pyStrip } from '../../core/python/text.js';

/** One phase of a decomposition: its name and its subtasks as the LLM wrote them (shape checked at dispatch). */
export interface PhasePlan {
  readonly name: string;
  readonly subtasks: readonly unknown[];
}

/** A usable decomposition, or the fallback plan with the reason it was needed. */
export interface JobPlan {
  readonly phases: readonly PhasePlan[];
  readonly strategy?: string;
  /** Why the single-subtask fallback was used; absent when the LLM's plan was used. */
  readonly fallbackReason?: string;
}

const objectSchema = z.record(z.string(), z.unknown());
const arraySchema = z.array(z.unknown());

function isObject(value: unknown): value is Record<string, unknown> {
  return objectSchema.safeParse(value).success && !Array.isArray(value);
}

/** Step (a): the contents of the first ```json fence, else of the first plain fence; unclosed: unchanged. */
function unfence(s: string): string {
  for (const fence of ['```json', '```']) {
    const start = s.indexOf(fence);
    if (start === -1) continue;
    const from = start + fence.length;
    const end = s.indexOf('```', from);
    return end === -1 ? s : pyStrip(s.slice(from, end));
  }
  return s;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // Not JSON: the caller tries the next extraction step.
    return { ok: false };
  }
}

/**
 * Extracts the JSON value of a decomposition answer (spec yadon.md 4.3.1): (a) trim and unfence,
 * (b) parse, (c) else parse the original output from the first `{` to the last `}`; undefined when
 * every step fails.
 */
function extractJson(output: string): { value: unknown } | undefined {
  const fenced = tryParse(unfence(pyStrip(output)));
  if (fenced.ok) return { value: fenced.value };
  const first = output.indexOf('{');
  const last = output.lastIndexOf('}');
  if (first === -1 || last < first) return undefined;
  const braced = tryParse(output.slice(first, last + 1));
  return braced.ok ? { value: braced.value } : undefined;
}

/** The plan used when decomposition fails: one implement phase with the original instruction. */
export function fallbackPlan(instruction: string, reason: string): JobPlan {
  return { phases: [{ name: 'implement', subtasks: [{ instruction }] }], fallbackReason: reason };
}

/**
 * Turns the manager LLM's output into a plan, or the fallback when extraction fails, the root is not an
 * object, `phases` is missing, empty or not an array, a phase is not an object, or a `subtasks` value is
 * present but not an array. A phase without `name` is `phase<i>`; without `subtasks` it has none.
 */
export function planFromOutput(output: string, instruction: string): JobPlan {
  const extracted = extractJson(output);
  if (extracted === undefined) return fallbackPlan(instruction, 'no JSON found in the answer');
  const root = extracted.value;
  if (!isObject(root)) return fallbackPlan(instruction, 'the answer is not a JSON object');
  const parsedPhases = arraySchema.safeParse(root['phases']);
  const phases = parsedPhases.success ? parsedPhases.data : [];
  if (phases.length === 0) {
    return fallbackPlan(instruction, '"phases" is missing, empty or not an array');
  }
  const plans: PhasePlan[] = [];
  for (const [i, phase] of phases.entries()) {
    if (!isObject(phase)) return fallbackPlan(instruction, `phase ${i} is not an object`);
    const subtasks = arraySchema.safeParse(Object.hasOwn(phase, 'subtasks') ? phase['subtasks'] : []);
    if (!subtasks.success) return fallbackPlan(instruction, `phase ${i}: "subtasks" is not an array`);
    const name = Object.hasOwn(phase, 'name') ? pyStr(phase['name']) : `phase${i}`;
    plans.push({ name, subtasks: subtasks.data });
  }
  const strategy = root['strategy'];
  return { phases: plans, ...(typeof strategy === 'string' && { strategy }) };
}
