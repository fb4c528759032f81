import { activityPill } from './agents-view.js';
import { activityOf } from './agent-activity.js';
import { edgeAnchor, linearScale, tickLabel, timeTicks } from './chart-scale.js';
import { el, replaceChildren, svg } from './dom.js';
import { TURN_STATES, turnDuration } from './transcript-view.js';
import { phaseMarks, timeDomain, timelineLanes, turnEnd, type PhaseMark } from './timeline-model.js';
import { formatClock, formatTokens, formatUsd, summaryLine } from './text-format.js';
import type { Agent, Team, TurnSummary } from '../gateways/http/api-schemas.js';

const LANE_PX = 30;
const BAR_PX = 20;
const AXIS_PX = 34;
/** Phase labels closer than this to the previous one are left out (the line stays). */
const LABEL_GAP_PX = 70;
const MIN_BAR_PX = 3;

/** What the timeline shows. */
export interface TimelineInput {
  readonly turns: readonly TurnSummary[];
  readonly agents: readonly Agent[];
  readonly teams: readonly Team[];
  readonly nowMs: number;
  /** The last this many ms, or everything. */
  readonly rangeMs: number | undefined;
}

function turnLabel(turn: TurnSummary, nowMs: number): string {
  const prompt = summaryLine(turn.prompt, 120).line;
  const parts = [
    `${turn.agent}, ${TURN_STATES[turn.state].label}, ${formatClock(turn.startedAt)}`,
    turnDuration(turn, nowMs),
    formatTokens(turn.usage),
    formatUsd(turn.usage.costUsd),
    turn.phase === undefined ? '' : `phase ${turn.phase}`,
    prompt,
  ];
  return parts.filter((p) => p !== '').join(' · ');
}

/**
 * Per-agent swimlanes of turns over time, hand-drawn SVG: a bar per turn (its state in its style and
 * in its label), dashed lines where phases begin, a time axis with the phase names. Every bar is a
 * focusable button: hover or focus shows a tooltip (prompt, duration, tokens, cost, outcome), Enter or
 * a click opens the transcript.
 */
export class TimelineView {
  readonly #box: HTMLElement;
  readonly #tip: HTMLElement;
  #turns = new Map<string, TurnSummary>();
  #last: TimelineInput | undefined;
  #width = 0;

  constructor(box: HTMLElement, tip: HTMLElement, onOpen: (turnId: string) => void) {
    this.#box = box;
    this.#tip = tip;
    const bar = (target: EventTarget | null): SVGElement | null =>
      target instanceof SVGElement && target.classList.contains('tl-turn') ? target : null;
    box.addEventListener('click', (e) => {
      const id = bar(e.target)?.dataset.turn;
      if (id !== undefined) onOpen(id);
    });
    box.addEventListener('keydown', (e) => {
      const id = bar(e.target)?.dataset.turn;
      if (id !== undefined && (e.key === 'Enter' || e.key === ' ')) {
        e.preventDefault();
        onOpen(id);
      } else if (e.key === 'Escape' && !this.#tip.hidden) {
        e.stopPropagation();
        this.#hideTip();
      }
    });
    box.addEventListener('pointerover', (e) => this.#showTip(bar(e.target)));
    box.addEventListener('pointerout', (e) => {
      if (bar(e.target) !== null) this.#hideTip();
    });
    box.addEventListener('focusin', (e) => this.#showTip(bar(e.target)));
    box.addEventListener('focusout', () => this.#hideTip());
    new ResizeObserver(() => {
      if (this.#last !== undefined && this.#trackWidth() !== this.#width) this.render(this.#last);
    }).observe(box);
  }

  render(input: TimelineInput): void {
    this.#last = input;
    const { nowMs } = input;
    const domain = timeDomain(input.turns, nowMs, input.rangeMs);
    const lanes = timelineLanes(
      input.turns,
      input.agents.map((a) => a.name),
      domain,
      nowMs,
    );
    if (lanes.length === 0) {
      replaceChildren(
        this.#box,
        el(
          'p',
          { class: 'empty-line', data: { testid: 'timeline-empty' } },
          'No turns yet. Each agent gets a lane here as soon as it runs one.',
        ),
      );
      return;
    }
    this.#width = this.#trackWidth();
    const width = Math.max(120, this.#width);
    const x = linearScale(domain, [0, width]);
    const marks = phaseMarks(input.turns, input.teams).filter((m) => m.at >= domain[0] && m.at <= domain[1]);
    const agents = new Map(input.agents.map((a) => [a.name, a]));
    this.#turns = new Map(lanes.flatMap((l) => l.turns.map((t) => [t.id, t] as const)));
    const ticks = timeTicks(domain[0], domain[1], Math.max(2, Math.floor(width / 90)));
    replaceChildren(
      this.#box,
      el(
        'div',
        { class: 'tl-row tl-axis-row', aria: { hidden: 'true' } },
        el('span', { class: 'tl-label' }),
        el('div', { class: 'tl-track-box' }, this.#axis(width, x, ticks, marks)),
      ),
      ...lanes.map((lane) => {
        const agent = agents.get(lane.agent);
        const activity = agent === undefined ? undefined : activityOf(agent);
        return el(
          'div',
          { class: 'tl-row tl-lane', data: { agent: lane.agent, key: `lane:${lane.agent}` } },
          el(
            'div',
            { class: 'tl-label' },
            el('span', { class: 'tl-name', title: lane.agent }, lane.agent),
            activity === undefined ? null : activityPill(activity, 'state-pill tl-state'),
          ),
          el(
            'div',
            { class: 'tl-track-box' },
            this.#track(lane.agent, lane.turns, { width, x, marks, ticks, nowMs, domain }),
          ),
        );
      }),
    );
  }

  #trackWidth(): number {
    const probe = this.#box.querySelector('.tl-track-box');
    if (probe !== null) return probe.clientWidth;
    // Not drawn yet: the box less the label column (see timeline.css).
    const label = parseFloat(getComputedStyle(this.#box).getPropertyValue('--tl-label-w')) || 0;
    return this.#box.clientWidth - label;
  }

  #axis(
    width: number,
    x: (v: number) => number,
    ticks: readonly number[],
    marks: readonly PhaseMark[],
  ): SVGElement {
    const step = (ticks[1] ?? Infinity) - (ticks[0] ?? 0);
    let lastLabelX = -Infinity;
    const labels: SVGElement[] = [];
    for (const mark of marks) {
      const at = x(mark.at);
      if (at - lastLabelX < LABEL_GAP_PX) continue;
      lastLabelX = at;
      labels.push(svg('text', { x: at + 3, y: 12, class: 'tl-phase-label' }, mark.label));
    }
    return svg(
      'svg',
      { class: 'tl-axis', width, height: AXIS_PX, viewBox: `0 0 ${width} ${AXIS_PX}` },
      ...ticks.map((t) =>
        svg(
          'g',
          {},
          svg('line', { x1: x(t), x2: x(t), y1: AXIS_PX - 6, y2: AXIS_PX, class: 'tl-tick' }),
          svg(
            'text',
            { x: x(t), y: AXIS_PX - 9, class: 'tl-tick-label', 'text-anchor': edgeAnchor(x(t), width) },
            tickLabel(t, step, formatClock),
          ),
        ),
      ),
      ...marks.map((m) => svg('line', { x1: x(m.at), x2: x(m.at), y1: 0, y2: AXIS_PX, class: 'tl-phase' })),
      ...labels,
    );
  }

  #track(
    agent: string,
    turns: readonly TurnSummary[],
    view: {
      readonly width: number;
      readonly x: (v: number) => number;
      readonly marks: readonly PhaseMark[];
      readonly ticks: readonly number[];
      readonly nowMs: number;
      readonly domain: readonly [number, number];
    },
  ): SVGElement {
    const { width, x, nowMs, domain } = view;
    const top = (LANE_PX - BAR_PX) / 2;
    return svg(
      'svg',
      {
        class: 'tl-track',
        width,
        height: LANE_PX,
        viewBox: `0 0 ${width} ${LANE_PX}`,
        role: 'group',
        'aria-label': `turns of ${agent}: ${turns.length}`,
      },
      ...view.ticks.map((t) => svg('line', { x1: x(t), x2: x(t), y1: 0, y2: LANE_PX, class: 'tl-grid' })),
      ...view.marks.map((m) =>
        svg('line', { x1: x(m.at), x2: x(m.at), y1: 0, y2: LANE_PX, class: 'tl-phase' }),
      ),
      ...turns.map((turn) => {
        const x0 = x(Math.max(domain[0], turn.startedAt));
        const x1 = x(Math.min(domain[1], turnEnd(turn, nowMs)));
        return svg('rect', {
          class: `tl-turn ts-${turn.state}`,
          x: x0,
          y: top,
          width: Math.max(MIN_BAR_PX, x1 - x0),
          height: BAR_PX,
          rx: 3,
          tabindex: 0,
          role: 'button',
          'aria-label': turnLabel(turn, nowMs),
          'data-turn': turn.id,
        });
      }),
    );
  }

  #showTip(bar: SVGElement | null): void {
    const turn = bar?.dataset.turn === undefined ? undefined : this.#turns.get(bar.dataset.turn);
    if (bar === null || turn === undefined) return;
    const nowMs = Date.now();
    const outcome = turn.state === 'running' ? turn.activity?.text : turn.outcome;
    replaceChildren(
      this.#tip,
      el(
        'p',
        { class: 'tip-head' },
        el('b', {}, turn.agent),
        ` · ${TURN_STATES[turn.state].label}`,
        turn.phase === undefined ? '' : ` · ${turn.phase}`,
      ),
      el('p', { class: 'tip-prompt' }, summaryLine(turn.prompt, 160).line || '(no prompt)'),
      el(
        'p',
        { class: 'tip-facts' },
        `${formatClock(turn.startedAt)} · ${turnDuration(turn, nowMs)} · ${formatTokens(turn.usage)} · ${formatUsd(turn.usage.costUsd)}`,
      ),
      outcome === undefined ? null : el('p', { class: 'tip-outcome' }, summaryLine(outcome, 160).line),
    );
    this.#tip.hidden = false;
    const host = this.#tip.offsetParent ?? document.body;
    const hostBox = host.getBoundingClientRect();
    const barBox = bar.getBoundingClientRect();
    const tipWidth = this.#tip.offsetWidth;
    const left = Math.min(Math.max(0, barBox.left - hostBox.left), Math.max(0, hostBox.width - tipWidth));
    this.#tip.style.left = `${left}px`;
    this.#tip.style.top = `${barBox.bottom - hostBox.top + 6}px`;
  }

  #hideTip(): void {
    this.#tip.hidden = true;
  }
}
