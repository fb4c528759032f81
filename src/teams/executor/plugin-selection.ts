import { bm25Top } from './bm25.js';
import { parseLenientJson } from './lenient-json.js';
import { askLlm, type LlmSettings } from './llm-call.js';
import {
  catalogueLine,
  estimateTokens,
  matchesKeyword,
  visibleEntries,
  visiblePlugins,
  type PluginInfo,
} from './plugin-catalogue.js';

/** Above this many (estimated) tokens the catalogue is narrowed before the selection. */
export const CATALOGUE_TOKEN_BUDGET = 3_000;
const BM25_TOP = 10;

/** What the plugin selection decided. `canExecute` false with a plugin named suppresses every channel. */
export interface PluginDecision {
  readonly hasTask: boolean;
  readonly canExecute: boolean;
  readonly pluginId: string | null;
  readonly entryId: string | null;
  readonly args: Record<string, unknown>;
  readonly taskDescription: string;
  readonly reason: string;
}

/** The selection's answer, or why there is none. */
export type PluginSelection =
  | { readonly ok: true; readonly decision: PluginDecision | null }
  | { readonly ok: false; readonly reason: string };

function idText(value: unknown): string | null {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  return null;
}

/** Normalises a selection answer (aliases `plugin_entry_id`/`event_id`, integer ids); null if unreadable. */
export function parsePluginAnswer(answer: string): PluginDecision | null {
  const raw = parseLenientJson(answer);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const get = (key: string): unknown => (Object.hasOwn(raw, key) ? Reflect.get(raw, key) : undefined);
  const args = get('plugin_args');
  return {
    hasTask: get('has_task') === true,
    canExecute: get('can_execute') === true,
    pluginId: idText(get('plugin_id')),
    entryId: idText(get('entry_id') ?? get('plugin_entry_id') ?? get('event_id')),
    args: typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...args } : {},
    taskDescription: typeof get('task_description') === 'string' ? String(get('task_description')) : '',
    reason: typeof get('reason') === 'string' ? String(get('reason')) : '',
  };
}

/** Why a decision names no valid plugin entry, or undefined when it is fine (or claims no task). */
export function invalidity(decision: PluginDecision, plugins: readonly PluginInfo[]): string | undefined {
  if (!decision.hasTask) return undefined;
  const plugin = plugins.find((p) => p.id === decision.pluginId);
  if (plugin === undefined) return `plugin_id '${decision.pluginId ?? ''}' not found`;
  const entries = visibleEntries(plugin);
  if (entries.length === 0) return 'no_agent_visible_entries';
  if (decision.entryId === null) return 'entry_id missing';
  if (!entries.some((e) => e.id === decision.entryId)) {
    return `entry_id '${decision.entryId}' not found in plugin '${plugin.id}'`;
  }
  return undefined;
}

function selectionPrompt(lines: readonly string[], conversation: string): string {
  return [
    'You pick at most one plugin entry that carries out the latest user request of a conversation.',
    '',
    'Plugins:',
    ...lines,
    '',
    'Rules:',
    '1. Choose a plugin only when the user clearly asks for what it does; otherwise "has_task": false.',
    '2. plugin_id and entry_id must be ids listed above; plugin_args must fit the entry args.',
    '3. Answer with strict JSON only:',
    '{"has_task": true, "can_execute": true, "task_description": "...", "plugin_id": "<id>",' +
      ' "entry_id": "<entry id>", "plugin_args": {}, "reason": ""}',
    '',
    'Conversation:',
    conversation,
  ].join('\n');
}

async function coarseScreen(
  llm: LlmSettings,
  lines: readonly string[],
  request: string,
  signal?: AbortSignal,
) {
  const prompt = [
    'List the ids of the plugins below that might serve this request. Reply with a JSON array of ids only.',
    `Request: ${request}`,
    ...lines,
  ].join('\n');
  const answer = await askLlm(llm, prompt, signal);
  const ids = answer.ok ? parseLenientJson(answer.text, { open: '[' }) : undefined;
  return new Set(Array.isArray(ids) ? ids.map(String) : []);
}

/** The catalogue lines to offer: everything, or a union of BM25, LLM coarse screen and keyword hits. */
async function offeredLines(
  llm: LlmSettings,
  plugins: readonly PluginInfo[],
  request: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const keywordHits = plugins.map((p) => matchesKeyword(p, request));
  const lines = plugins.map((p, i) => catalogueLine(p, { keywordMatch: keywordHits[i] === true }));
  if (estimateTokens(lines.join('\n')) <= CATALOGUE_TOKEN_BUDGET) return lines;
  const chosen = new Set(bm25Top(lines, request, BM25_TOP));
  const screened = await coarseScreen(llm, lines, request, signal);
  plugins.forEach((p, i) => {
    if (screened.has(p.id) || keywordHits[i] === true) chosen.add(i);
  });
  return chosen.size === 0 ? lines : lines.filter((_, i) => chosen.has(i));
}

/**
 * Plugin selection: offers the visible catalogue (narrowed when large), validates the answer and
 * re-asks ONCE with a `CORRECTION:` message when it names an unknown plugin or entry; still invalid
 * → `canExecute: false` with the reason. Never rejects.
 */
export async function selectPlugin(
  llm: LlmSettings,
  catalogue: readonly PluginInfo[],
  conversation: string,
  request: string,
  signal?: AbortSignal,
): Promise<PluginSelection> {
  const plugins = visiblePlugins(catalogue);
  if (plugins.length === 0) return { ok: true, decision: null };
  const prompt = selectionPrompt(await offeredLines(llm, plugins, request, signal), conversation);
  const first = await askLlm(llm, prompt, signal);
  if (!first.ok) return first;
  const decision = parsePluginAnswer(first.text);
  if (decision === null)
    return { ok: false, reason: 'plugin selection failed: the answer is not a JSON object' };
  const hint = invalidity(decision, plugins);
  if (hint === undefined) return { ok: true, decision };
  const retryPrompt = `${prompt}\n\nassistant: ${first.text}\n\nuser: CORRECTION: ${hint}. Please fix your response and return a valid JSON.`;
  const second = await askLlm(llm, retryPrompt, signal);
  const fixed = second.ok ? parsePluginAnswer(second.text) : null;
  const stillWrong = fixed === null ? hint : invalidity(fixed, plugins);
  if (fixed !== null && stillWrong === undefined) return { ok: true, decision: fixed };
  return { ok: true, decision: { ...(fixed ?? decision), canExecute: false, reason: stillWrong ?? hint } };
}
