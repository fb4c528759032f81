import { shareBar } from '../demo/progress-view.js';
import type { RunProgress } from '../../runs/run-engine.js';
import type { RunRecord } from '../../runs/run-record.js';
import { secondsText } from '../../runs/turn-deliveries.js';

/**
 * The exit code of a finished run: 0 succeeded, 1 failed or changed nothing (`no-change`), 3 stopped by
 * its budget (or interrupted).
 */
export function exitCodeOf(record: RunRecord): number {
  if (record.status === 'succeeded') return 0;
  return record.status === 'stopped' ? 3 : 1;
}

/** One readable line per progress step. */
export function progressLine(p: RunProgress): string | undefined {
  switch (p.kind) {
    case 'planned':
      return `plan: ${p.phases.map((ph) => `${ph.name} (${ph.subtasks})`).join(' → ')}`;
    case 'phase':
      return `── phase ${p.index + 1}/${p.count}: ${p.name}`;
    case 'turn-started':
      return `  ▶ worker ${p.worker} ${p.subtask}: ${oneLine(p.instruction, 90)}`;
    case 'turn-finished':
      return `  ${p.succeeded ? '✔' : '✘'} worker ${p.worker} ${p.subtask}: ${oneLine(p.summary, 90)}`;
    case 'stalled':
      return `  … ${p.turn} went silent for ${secondsText(p.silentMs)} (attempt ${p.attempt}); stopping it`;
    case 'retrying':
      return `  ↻ ${p.turn} failed (${oneLine(p.reason, 80)}); the bus runs it again in ${(p.delayMs / 1000).toFixed(1)} s (attempt ${p.attempt})`;
    case 'escalated':
      return [
        `  ⚠ ${p.turn} gave up after ${p.attempts} attempt(s): ${oneLine(p.reason, 90)}`,
        '    answer retry, skip or abort (terminal prompt, dashboard inbox), or run:',
        `    musubi runs answer ${p.runId} <retry|skip|abort>`,
      ].join('\n');
    case 'answered':
      return `  ← ${p.choice} ${p.turn} (answered by ${p.by})`;
    case 'waiting-lease':
      return `  … ${p.turn} is still leased by the interrupted process; it comes back in ${Math.ceil(p.untilMs / 1000)} s`;
    case 'refused':
      return `  ↻ worker ${p.worker} ${p.subtask} changed nothing, an edit failed: ${oneLine(p.refusal, 90)}; running it again with that quoted`;
    case 'skipped':
      return `  · ${p.subtask}: done in an earlier attempt, not run again`;
    case 'conflict':
      return `  ! merging ${p.subtask} conflicts in ${p.files.join(', ')}; asking a resolver`;
    case 'tests':
      return `  tests ${p.passed ? 'passed' : `failed (exit ${p.exitCode})`}`;
    case 'usage':
    case 'activity':
      return undefined;
  }
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

function seconds(record: RunRecord): string {
  const end = record.finishedAt ?? record.updatedAt;
  return `${((end - record.createdAt) / 1000).toFixed(1)} s`;
}

/** The `--json` object of a run (documented in docs/run.md). */
export function runJson(record: RunRecord, filesChanged: readonly string[]) {
  return {
    runId: record.id,
    status: record.status,
    branch: record.branch,
    baseCommit: record.baseCommit,
    headCommit: record.headCommit,
    filesChanged,
    tests:
      record.tests === null
        ? null
        : { command: record.tests.command, exitCode: record.tests.exitCode, passed: record.tests.passed },
    conflicts: record.conflicts.length,
    turns: record.turns,
    usage: record.usage,
    reason: record.reason,
  };
}

/** The summary printed at the end of a run and by `musubi runs show`. */
export function summaryLines(record: RunRecord, diffStat: string): string[] {
  const tests =
    record.tests === null
      ? 'none'
      : `${record.tests.passed ? 'passed' : 'failed'} (${record.tests.command}, exit ${record.tests.exitCode})`;
  const u = record.usage;
  return [
    '',
    `run ${record.id}: ${record.status}${record.reason === null ? '' : ` — ${record.reason}`}`,
    `  branch     ${record.branch} (from ${record.baseCommit.slice(0, 10)})`,
    `  tests      ${tests}`,
    `  turns      ${record.turns} (${record.retries} retried), conflicts ${record.conflicts.length} (${record.conflicts.filter((c) => c.isResolved).length} resolved)`,
    `  usage      ${u.inputTokens} in / ${u.outputTokens} out tokens, $${u.costUsd.toFixed(4)}`,
    `  time       ${seconds(record)}`,
    ...(diffStat.trim() === ''
      ? ['  changes    none']
      : [
          '  changes',
          ...diffStat
            .trimEnd()
            .split('\n')
            .map((l) => `  ${l}`),
        ]),
    ...(record.status === 'stopped' ? [`  resume     musubi run --resume ${record.id}`] : []),
    ...(record.status === 'succeeded' ? [`  merge it   git merge ${record.branch}`] : []),
  ];
}

/** One line per run for `musubi runs`. */
export function listLine(record: RunRecord): string {
  const when = new Date(record.createdAt).toISOString().replace('T', ' ').slice(0, 19);
  return `${record.id}  ${record.status.padEnd(9)}  ${when}  ${oneLine(record.goal, 60)}`;
}

/** Draws a run: milestone lines, and on a terminal a status block redrawn below them. */
export interface RunView {
  update(progress: RunProgress): void;
  /** Removes nothing; the last status block stays above what is printed next. */
  close(): void;
}

const BAR_WIDTH = 20;

/**
 * The terminal view of `musubi run`: every milestone as a line (what a log file gets too); on a
 * terminal also, kept at the bottom and redrawn in place, the current phase's bar, tokens and cost so
 * far, and each running worker's latest activity from its turn's structured events.
 */
export function createRunView(o: {
  readonly out: NodeJS.WritableStream;
  readonly isTty: boolean;
  readonly columns: number;
}): RunView {
  let phase = { name: '', index: 0, count: 0, subtasks: 0, done: 0 };
  let plan: readonly { name: string; subtasks: number }[] = [];
  let usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const running = new Map<string, { worker: number; text: string }>();
  let drawn = 0;
  const width = Math.max(40, o.columns) - 1;
  const fit = (text: string): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

  const block = (): string[] => {
    if (phase.name === '') return [];
    const bar = shareBar(phase.done, phase.subtasks, BAR_WIDTH);
    const spent = `${usage.inputTokens + usage.outputTokens} tokens, $${usage.costUsd.toFixed(4)}`;
    return [
      fit(
        `  ${phase.name} ${phase.index + 1}/${phase.count} ${bar} ${phase.done}/${phase.subtasks} · ${spent}`,
      ),
      ...[...running.entries()].map(([id, r]) =>
        fit(`    worker ${r.worker} ${id.replace(/^.*-(?=[^-]+-sub\d+$)/, '')}: ${r.text}`),
      ),
    ];
  };
  const write = (lines: readonly string[]): void => {
    if (!o.isTty) {
      for (const line of lines) o.out.write(`${line}\n`);
      return;
    }
    const clear = drawn > 0 ? `\x1b[${drawn}F\x1b[J` : '';
    const status = block();
    o.out.write(`${clear}${[...lines.map(fit), ...status].map((l) => `${l}\n`).join('')}`);
    drawn = status.length;
  };

  return {
    update(p) {
      if (p.kind === 'planned') plan = p.phases;
      if (p.kind === 'phase') {
        const subtasks = plan.find((ph) => ph.name === p.name)?.subtasks ?? 1;
        phase = { name: p.name, index: p.index, count: p.count, subtasks, done: 0 };
      }
      if (p.kind === 'turn-started') running.set(p.subtask, { worker: p.worker, text: 'starting' });
      if (p.kind === 'turn-finished' || p.kind === 'skipped') {
        running.delete(p.subtask);
        phase = { ...phase, done: phase.done + 1 };
      }
      if (p.kind === 'activity') {
        const r = running.get(p.subtask);
        if (r !== undefined) running.set(p.subtask, { ...r, text: p.text });
      }
      if (p.kind === 'usage') usage = p.usage;
      const line = progressLine(p);
      if (line !== undefined) write(line.split('\n'));
      else if (o.isTty) write([]);
    },
    close() {
      running.clear();
      if (o.isTty) write([]);
    },
  };
}
