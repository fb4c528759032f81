/** One channel or plugin offered in an assessment prompt (`- <id>: <description>`). */
interface Offer {
  readonly id: string;
  readonly description: string;
  readonly entries: readonly string[];
}

const STOPWORDS = new Set([
  'the',
  'and',
  'for',
  'with',
  'that',
  'this',
  'from',
  'into',
  'please',
  'can',
  'you',
  'run',
  'use',
]);
const OFFER_LINE = /^\s*[-*]\s+([A-Za-z0-9_.:-]+)(?:\s+\[KEYWORD MATCH\])?\s*:\s*(.*)$/;

/** True when `prompt` is a channel assessment or plugin selection (N.E.K.O. style): it asks for `can_execute`. */
export function isAssessmentRequest(prompt: string): boolean {
  return prompt.includes('can_execute');
}

/** True when `prompt` is a duplicate-task judgement (`[matched_id_or_null, duplicate_boolean]`). */
export function isDedupeRequest(prompt: string): boolean {
  return /duplicate/i.test(prompt) && /matched/i.test(prompt) && !isAssessmentRequest(prompt);
}

function latestRequest(prompt: string): string {
  const m = /LATEST_USER_REQUEST:[ \t]*(.*)/.exec(prompt);
  return (m?.[1] ?? '').trim();
}

function words(text: string): Set<string> {
  const found = text.toLowerCase().match(/[a-z0-9_]{3,}/g) ?? [];
  return new Set(found.filter((w) => !STOPWORDS.has(w)));
}

/** Offers listed before `LATEST_USER_REQUEST:` (so bullets in the conversation are never read as channels). */
function offers(prompt: string): Offer[] {
  const head = prompt.split('LATEST_USER_REQUEST:')[0] ?? '';
  return head.split(/\r?\n/).flatMap((line) => {
    const m = OFFER_LINE.exec(line);
    if (m?.[1] === undefined) return [];
    const [description = '', entryPart = ''] = (m[2] ?? '').split('| entries:');
    const entries = [...entryPart.matchAll(/(?:\[|;\s*)([A-Za-z0-9_.-]+):/g)].flatMap((e) =>
      e[1] ? [e[1]] : [],
    );
    return [{ id: m[1], description: description.trim(), entries }];
  });
}

function matchOffer(request: string, offer: Offer): string | undefined {
  if (request.includes(`@${offer.id}`)) return `@${offer.id}`;
  const requestWords = words(request);
  const offerWords = words(`${offer.id.replace(/[-_.:]/g, ' ')} ${offer.description}`);
  return [...requestWords].find((w) => offerWords.has(w));
}

function isChat(request: string): boolean {
  return request === '' || /[?？]\s*$/.test(request);
}

/**
 * Answers a channel assessment by fixed rules: a question or empty request → every channel false;
 * a request naming `@<id>` → only that channel; else a channel whose id or description shares a word
 * (3+ letters, not a stopword) with the request is true, at most the first two in listing order.
 * Returns `{"<id>": {"can_execute", "task_description", "reason"}, ...}` as JSON text.
 */
export function assessmentReply(prompt: string): string {
  const request = latestRequest(prompt);
  const channels = offers(prompt);
  const mentioned = channels.find((c) => request.includes(`@${c.id}`));
  let chosen = 0;
  const reply: Record<string, { can_execute: boolean; task_description: string; reason: string }> = {};
  for (const channel of channels) {
    const why = isChat(request)
      ? undefined
      : mentioned !== undefined
        ? channel === mentioned
          ? `@${channel.id}`
          : undefined
        : matchOffer(request, channel);
    const canExecute = why !== undefined && chosen < 2;
    if (canExecute) chosen++;
    reply[channel.id] = {
      can_execute: canExecute,
      task_description: canExecute ? request.slice(0, 200) : '',
      reason: canExecute
        ? `scripted: matched '${why}'`
        : isChat(request)
          ? 'scripted: chat or question'
          : 'scripted: no match',
    };
  }
  return JSON.stringify(reply);
}

function pluginArgs(request: string): Record<string, unknown> {
  const json = /\{[\s\S]*\}/.exec(request)?.[0];
  if (json !== undefined) {
    try {
      const value: unknown = JSON.parse(json);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ...value };
    } catch {
      // Not JSON: fall through to key=value pairs.
    }
  }
  const args: Record<string, unknown> = {};
  for (const m of request.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) {
    const raw = m[2] ?? '';
    if (m[1] !== undefined)
      args[m[1]] = raw.startsWith('"') ? raw.slice(1, -1) : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return args;
}

/**
 * Answers a plugin selection by fixed rules: the first catalogue plugin matched like a channel (see
 * {@link assessmentReply}); its entry is the one whose id appears in the request, else the first listed
 * (`run` when none); arguments come from a JSON object or `key=value` pairs in the request.
 */
export function pluginSelectionReply(prompt: string): string {
  const request = latestRequest(prompt);
  const plugin = isChat(request)
    ? undefined
    : offers(prompt).find((p) => matchOffer(request, p) !== undefined);
  if (plugin === undefined) {
    return JSON.stringify({
      has_task: false,
      can_execute: false,
      task_description: '',
      plugin_id: null,
      entry_id: null,
      plugin_args: {},
      reason: 'scripted: no plugin matches',
    });
  }
  const entry = plugin.entries.find((e) => request.includes(e)) ?? plugin.entries[0] ?? 'run';
  return JSON.stringify({
    has_task: true,
    can_execute: true,
    task_description: request.slice(0, 200),
    plugin_id: plugin.id,
    entry_id: entry,
    plugin_args: pluginArgs(request),
    reason: `scripted: matched '${matchOffer(request, plugin) ?? plugin.id}'`,
  });
}

/** The structured answer for a N.E.K.O.-style request, or undefined when `prompt` is none of them. */
export function structuredNekoReply(prompt: string): string | undefined {
  if (isAssessmentRequest(prompt))
    return prompt.includes('has_task') ? pluginSelectionReply(prompt) : assessmentReply(prompt);
  if (isDedupeRequest(prompt)) return JSON.stringify([null, false]);
  return undefined;
}
