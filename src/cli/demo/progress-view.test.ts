import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PhaseView } from '../../hub/demo/demo-progress.js';
import { createProgressView, drawBar, formatPhaseLine } from './progress-view.js';

function sink(): { out: PassThrough; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.setEncoding('utf8').on('data', (d: string) => (text += d));
  return { out, text: () => text };
}

const running: PhaseView = { phase: 'implement', state: 'running', done: 1, total: 2, note: 'yadon-1 done' };

describe('progress view', () => {
  it('draws a bar filled by done/total and an empty one for a skipped phase', () => {
    expect(drawBar(running, 8)).toBe('[████░░░░]');
    expect(drawBar({ ...running, state: 'skipped' }, 4)).toBe('[░░░░]');
    expect(formatPhaseLine(running, { isColor: false, columns: 200 })).toBe(
      `… implement [${'█'.repeat(12)}${'░'.repeat(12)}] 1/2     yadon-1 done`,
    );
  });

  it('cuts a bar line to the terminal width', () => {
    const line = formatPhaseLine({ ...running, note: 'x'.repeat(200) }, { isColor: false, columns: 60 });
    expect(line.length).toBe(59);
    expect(line.endsWith('…')).toBe(true);
  });

  it('prints story lines and each ended phase once when the output is not a terminal', () => {
    const { out, text } = sink();
    const view = createProgressView({ out, isTty: false, isColor: false, columns: 80 });
    view.lines(['musubi demo: goal']);
    view.update({ view: running, logLine: 'yadon-1 done' });
    view.update({ view: { ...running, state: 'done', done: 2, note: 'all done' }, logLine: 'all done' });
    view.update({ view: { ...running, state: 'done', done: 2, note: 'all done' } });
    const lines = text().trimEnd().split('\n');
    expect(lines).toEqual([
      'musubi demo: goal',
      '  implement · yadon-1 done',
      `✔ implement [${'█'.repeat(24)}] 2/2     all done`,
    ]);
  });

  it('redraws the bars in place on a terminal, story lines scrolling above them', () => {
    const { out, text } = sink();
    const view = createProgressView({ out, isTty: true, isColor: false, columns: 80 });
    view.update({ view: running });
    view.lines(['header']);
    const frames = text().split('\x1b[8F\x1b[J');
    expect(frames).toHaveLength(2);
    expect(frames[0]?.split('\n')).toHaveLength(9);
    expect(frames[1]?.startsWith('header\n')).toBe(true);
    expect(frames[1]).toContain('… implement');
  });
});
