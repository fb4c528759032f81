import { el, type Child } from './dom.js';
import {
  clip,
  formatAgo,
  formatClock,
  formatDuration,
  formatTokens,
  formatUsd,
  summaryLine,
} from './text-format.js';
import type { TranscriptEntry, TurnSummary } from '../gateways/http/api-schemas.js';

/** A turn's state as a word and an icon (never colour alone). */
export const TURN_STATES: Readonly<Record<TurnSummary['state'], { label: string; icon: string }>> = {
  running: { label: 'running', icon: '▶\uFE0E' },
  succeeded: { label: 'succeeded', icon: '✓' },
  failed: { label: 'failed', icon: '✕' },
  timed_out: { label: 'timed out', icon: '◷' },
  cancelled: { label: 'cancelled', icon: '⊘' },
  interrupted: { label: 'interrupted', icon: '↯' },
};

/** Outputs longer than this many lines start folded. */
const FOLD_LINES = 8;
const FOLD_CHARS = 800;

/** A turn state badge: icon and word. */
export function turnStateBadge(state: TurnSummary['state']): HTMLElement {
  const view = TURN_STATES[state];
  return el(
    'span',
    { class: `turn-state ts-${state}` },
    el('span', { class: 'icon', aria: { hidden: 'true' } }, view.icon),
    view.label,
  );
}

/** How long a turn took, or has been running. */
export function turnDuration(turn: TurnSummary, nowMs: number): string {
  return formatDuration(
    (turn.endedAt ?? (turn.state === 'running' ? nowMs : turn.lastEventAt)) - turn.startedAt,
  );
}

/** The facts of one turn in a line: when, how long, tokens, cost, tool calls. */
function turnFacts(turn: TurnSummary, nowMs: number): HTMLElement {
  return el(
    'span',
    { class: 'turn-facts' },
    el('time', { title: new Date(turn.startedAt).toLocaleString() }, formatClock(turn.startedAt)),
    el('span', {}, turnDuration(turn, nowMs)),
    el(
      'span',
      { title: `${turn.usage.inputTokens} input / ${turn.usage.outputTokens} output tokens` },
      formatTokens(turn.usage),
    ),
    el('span', {}, formatUsd(turn.usage.costUsd)),
    el('span', {}, `${turn.toolCalls} ${turn.toolCalls === 1 ? 'tool call' : 'tool calls'}`),
  );
}

/** One turn in a list: a button that opens its transcript. */
export function turnRow(turn: TurnSummary, nowMs: number, onOpen: (id: string) => void): HTMLElement {
  const prompt = summaryLine(turn.prompt, 140).line;
  const outcome = turn.state === 'running' ? turn.activity?.text : turn.outcome;
  return el(
    'li',
    { class: `turn-item ts-${turn.state}`, data: { key: `turn:${turn.id}`, turn: turn.id } },
    el(
      'button',
      {
        class: 'turn-row',
        type: 'button',
        onClick: () => onOpen(turn.id),
      },
      el('span', { class: 'turn-line' }, turnStateBadge(turn.state), turnFacts(turn, nowMs)),
      el('span', { class: 'turn-prompt' }, prompt === '' ? '(no prompt)' : prompt),
      outcome === undefined || outcome === ''
        ? null
        : el(
            'span',
            { class: 'turn-outcome' },
            el('span', { class: 'muted' }, turn.state === 'running' ? 'now: ' : 'outcome: '),
            summaryLine(outcome, 160).line,
          ),
    ),
  );
}

/** The head of a transcript: state, facts, where the turn belongs, prompt and outcome. */
export function turnHeader(turn: TurnSummary, nowMs: number): HTMLElement {
  const where = [
    turn.backend,
    turn.team === undefined ? null : `team ${turn.team}`,
    turn.run === undefined ? null : `run ${turn.run}`,
    turn.phase === undefined ? null : `phase ${turn.phase}`,
    turn.subtask === undefined ? null : `subtask ${turn.subtask}`,
  ].filter((x): x is string => x !== null);
  return el(
    'div',
    { class: 'turn-head' },
    el('p', { class: 'turn-line' }, turnStateBadge(turn.state), turnFacts(turn, nowMs)),
    el(
      'p',
      { class: 'muted' },
      where.join(' · '),
      ` · last sign of life ${formatAgo(turn.lastEventAt, nowMs)}`,
    ),
    el('h3', {}, 'Prompt'),
    el(
      'pre',
      { class: 'tx-pre' },
      turn.prompt,
      turn.promptChars > turn.prompt.length ? `\n… (${turn.promptChars} characters in all)` : '',
    ),
    turn.outcome === undefined ? null : el('h3', {}, 'Outcome'),
    turn.outcome === undefined ? null : el('pre', { class: 'tx-pre' }, turn.outcome),
  );
}

/** JSON text pretty-printed, anything else as it is. */
function prettyInput(input: string): string {
  try {
    return JSON.stringify(JSON.parse(input), null, 2);
  } catch {
    return input; // not JSON: the backend passed the arguments as text
  }
}

/** Text in a <pre>, folded behind a summary when long. */
function foldable(label: string, text: string, className: string): HTMLElement {
  const lines = text.split('\n').length;
  const pre = el('pre', { class: `tx-pre ${className}` }, text);
  if (lines <= FOLD_LINES && text.length <= FOLD_CHARS) return pre;
  return el('details', { class: 'tx-fold' }, el('summary', {}, `${label} (${lines} lines)`), pre);
}

function entryBody(
  entry: TranscriptEntry,
  toolName: (callId: string | undefined) => string | undefined,
): Child[] {
  switch (entry.kind) {
    case 'started':
      return [el('span', { class: 'tx-label' }, 'Started '), el('code', { class: 'tx-code' }, entry.command)];
    case 'message':
      return [el('div', { class: 'tx-text' }, entry.text)];
    case 'tool':
      return [
        el(
          'div',
          { class: 'tx-tool-head' },
          el('span', { class: `tool-kind tk-${entry.toolKind}` }, entry.toolKind),
          el('b', {}, entry.name),
          el('code', { class: 'tx-code' }, clip(entry.summary, 300)),
        ),
        entry.input === ''
          ? null
          : el(
              'details',
              { class: 'tx-fold' },
              el('summary', {}, 'Input'),
              el('pre', { class: 'tx-pre' }, prettyInput(entry.input)),
            ),
      ];
    case 'tool_result': {
      const name = toolName(entry.callId);
      const label = `${entry.isError ? 'Error from' : 'Result of'} ${name ?? 'the tool'}`;
      return [
        el(
          'span',
          { class: 'tx-label' },
          entry.isError ? el('span', { class: 'icon', aria: { hidden: 'true' } }, '✕ ') : null,
          label,
        ),
        entry.output === ''
          ? el('span', { class: 'muted' }, ' (no output)')
          : foldable('Output', entry.output, ''),
      ];
    }
    case 'usage':
      return [
        el('span', { class: 'tx-label' }, 'Usage'),
        ` ${entry.usage.inputTokens} in · ${entry.usage.outputTokens} out · ${formatUsd(entry.usage.costUsd)}`,
      ];
    case 'error':
      return [
        el(
          'span',
          { class: 'tx-label' },
          el('span', { class: 'icon', aria: { hidden: 'true' } }, '⚠\uFE0E '),
          'Error',
        ),
        el('div', { class: 'tx-text' }, entry.message),
      ];
    case 'waiting':
      return [
        el(
          'span',
          { class: 'tx-label' },
          el('span', { class: 'icon', aria: { hidden: 'true' } }, '? '),
          'Waiting for an answer',
        ),
        el('div', { class: 'tx-text' }, entry.question),
      ];
    case 'stopping':
      return [el('span', { class: 'tx-label' }, 'Stopping'), ` ${entry.reason}`];
    case 'finished':
      return [
        el('span', { class: 'tx-label' }, 'Finished'),
        ' ',
        turnStateBadge(entry.state),
        entry.text === '' ? null : foldable('Answer', entry.text, ''),
      ];
  }
}

/** One transcript entry: its time and, by kind, the text, tool call, result, usage or question. */
export function entryNode(
  entry: TranscriptEntry,
  toolName: (callId: string | undefined) => string | undefined,
): HTMLElement {
  const isError = (entry.kind === 'tool_result' && entry.isError) || entry.kind === 'error';
  return el(
    'li',
    {
      class: `tx tx-${entry.kind}${isError ? ' is-error' : ''}`,
      data: { n: String(entry.n), kind: entry.kind },
    },
    el('time', { class: 'tx-time', title: new Date(entry.at).toLocaleString() }, formatClock(entry.at)),
    el('div', { class: 'tx-main' }, ...entryBody(entry, toolName)),
  );
}
