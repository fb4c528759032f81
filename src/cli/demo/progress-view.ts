import {
  DEMO_PHASES,
  type DemoPhase,
  type PhaseView,
  type ProgressChange,
} from '../../hub/demo/demo-progress.js';

/** Width of a bar between its brackets. */
const BAR_WIDTH = 24;
const NAME_WIDTH = 10;
const MARKS: Readonly<Record<PhaseView['state'], string>> = {
  pending: ' ',
  running: '…',
  done: '✔',
  failed: '✘',
  skipped: '–',
};
const COLORS: Readonly<Record<PhaseView['state'], string>> = {
  pending: '\x1b[2m',
  running: '\x1b[36m',
  done: '\x1b[32m',
  failed: '\x1b[31m',
  skipped: '\x1b[2m',
};
const RESET = '\x1b[0m';

/** Draws the demo's progress: one bar per phase, and the run's story as lines above them. */
export interface ProgressView {
  /** Permanent lines (header, story), printed above the bars. */
  lines(texts: readonly string[]): void;
  update(change: ProgressChange): void;
  /** Draws the bars one last time; later output goes below them. */
  close(): void;
}

/** How to draw: redraw in place on a terminal, one line per event elsewhere (logs, CI, tests). */
export interface ProgressViewOptions {
  readonly out: NodeJS.WritableStream;
  readonly isTty: boolean;
  readonly isColor: boolean;
  /** Terminal width; lines are cut to it so a redraw never miscounts wrapped lines. */
  readonly columns: number;
}

/** `[████████░░░░] 2/4` — the filled share is done/total; a skipped phase shows an empty bar. */
export function drawBar(view: PhaseView, width = BAR_WIDTH): string {
  return shareBar(view.state === 'skipped' ? 0 : view.done, view.total, width);
}

/** `[████░░░░]`: done/total of `width` cells filled (none when total is 0). */
export function shareBar(done: number, total: number, width = BAR_WIDTH): string {
  const share = total === 0 ? 0 : Math.min(1, done / total);
  const filled = Math.round(share * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

/** One bar line: mark, phase name, bar, count and the phase's latest note, cut to `columns`. */
export function formatPhaseLine(view: PhaseView, options: { isColor: boolean; columns: number }): string {
  const count = view.state === 'skipped' ? 'skipped' : `${view.done}/${view.total}`;
  const head = `${MARKS[view.state]} ${view.phase.padEnd(NAME_WIDTH)}`;
  const tail = ` ${count.padEnd(7)} ${view.note}`;
  const room = Math.max(0, options.columns - 1 - head.length - BAR_WIDTH - 2);
  const cut = tail.length > room ? `${tail.slice(0, Math.max(0, room - 1))}…` : tail;
  const bar = drawBar(view);
  return options.isColor ? `${COLORS[view.state]}${head}${bar}${RESET}${cut}` : `${head}${bar}${cut}`;
}

/**
 * Creates the progress view. On a terminal the bars of every phase stay at the bottom and are redrawn in
 * place (ANSI cursor movement) while story lines scroll above them; otherwise each story line and each
 * ended phase's bar is printed once, in order, so the output reads well in a log file.
 */
export function createProgressView(o: ProgressViewOptions): ProgressView {
  const views = new Map<DemoPhase, PhaseView>(
    DEMO_PHASES.map((phase) => [phase, { phase, state: 'pending', done: 0, total: 0, note: '' }]),
  );
  const printed = new Set<DemoPhase>();
  let drawnLines = 0;
  // Lines printed once (no terminal) are never redrawn, so they need not be cut.
  const style = { isColor: o.isColor, columns: o.isTty ? Math.max(40, o.columns) : Number.MAX_SAFE_INTEGER };
  const fit = (text: string): string =>
    o.isTty && text.length > style.columns - 1 ? `${text.slice(0, style.columns - 2)}…` : text;

  const redraw = (above: readonly string[]): void => {
    const clear = drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : '';
    const block = DEMO_PHASES.map((p) => formatPhaseLine(views.get(p) ?? emptyView(p), style));
    const lines = [...above.map(fit), ...block];
    o.out.write(`${clear}${lines.join('\n')}\n`);
    drawnLines = block.length;
  };

  return {
    lines(texts) {
      if (o.isTty && drawnLines > 0) redraw(texts);
      else for (const text of texts) o.out.write(`${fit(text)}\n`);
    },
    update(change) {
      const { view } = change;
      views.set(view.phase, view);
      const story =
        change.logLine === undefined ? [] : [`  ${view.phase.padEnd(NAME_WIDTH)}· ${change.logLine}`];
      if (o.isTty) return redraw(story);
      const isEnded = view.state === 'done' || view.state === 'failed' || view.state === 'skipped';
      const isFirstEnd = isEnded && !printed.has(view.phase);
      // The bar line of an ending phase carries its note, so the same words are not printed twice.
      if (!(isFirstEnd && change.logLine === view.note)) for (const line of story) o.out.write(`${line}\n`);
      if (isFirstEnd) {
        printed.add(view.phase);
        o.out.write(`${formatPhaseLine(view, style)}\n`);
      }
    },
    close() {
      if (o.isTty) redraw([]);
    },
  };
}

function emptyView(phase: DemoPhase): PhaseView {
  return { phase, state: 'pending', done: 0, total: 0, note: '' };
}
