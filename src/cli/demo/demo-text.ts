import { isAbsolute, relative } from 'node:path';
import type { DemoReport } from '../../hub/demo/demo-report.js';
import type { DemoReady } from '../../hub/demo/run-demo.js';

const LABEL = 11;

function row(label: string, text: string): string {
  return `  ${label.padEnd(LABEL)}${text}`;
}

/** `path` relative to `cwd` when it lies below it, else as it is. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

function bytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`;
}

/** The lines printed before the bars: goal, agents, team by protocol, the injected fault, where things are. */
export function formatReady(ready: DemoReady, cwd: string): string[] {
  const names = (protocol: string): string =>
    ready.team
      .filter((m) => m.protocol === protocol)
      .map((m) => m.name)
      .join(', ');
  const agents =
    ready.backend === 'scripted'
      ? 'scripted (built in: no LLM, no tokens)'
      : `${ready.backend} (real CLI, billed to your account)`;
  const state = shownPath(ready.paths.stateDir, cwd);
  return [
    `musubi demo: ${ready.goalTitle}`,
    row('agents', agents),
    row('team', `${names('yadon')} on yadon (unix sockets in ${ready.socketDir})`),
    row('', `${names('agent-sync')} on agent_sync (tcp ${ready.agentSync.host}:${ready.agentSync.port})`),
    row('', `${names('bus')} on the bus (receive and ack under a lease)`),
    row('fault', ready.fault),
    row('dashboard', ready.dashboardUrl),
    row('state', `${state} (SQLite bus.db, log demo.log, scratch project project/)`),
    '',
  ];
}

function resultLine(report: DemoReport): string {
  const after = report.testsAfter?.counts;
  const before = report.testsBefore;
  const was = before === undefined ? '' : `; before: ${before.fail} of ${before.tests} failing`;
  if (report.isSuccess && after !== undefined) {
    return `✔ goal met: the sample's tests pass (${after.pass} of ${after.tests}${was})`;
  }
  if (report.error !== undefined) return `✘ the run stopped: ${report.error}`;
  if (after !== undefined && after.fail > 0) {
    return `✘ goal not met: the sample's tests still fail (${after.fail} of ${after.tests} failing${was})`;
  }
  return '✘ goal not met: see the phases above';
}

function retryLine(report: DemoReport): string {
  const c = report.changelog;
  if (c === undefined) return 'changelog step not reached';
  const end = c.isDone ? `done on attempt ${c.attempts}` : 'not done';
  return (
    `scribe: ${c.retries} retr${c.retries === 1 ? 'y' : 'ies'} with backoff, ${c.deadLettered} dead-lettered, ` +
    `${c.retriedFromDeadLetters} retried from the dead letters by the lead, ${end}`
  );
}

/** The closing summary: result, what changed, messages, retries, time, dashboard. */
export function formatSummary(
  report: DemoReport,
  options: { readonly dashboardUrl: string; readonly isKept: boolean; readonly cwd: string },
): string[] {
  const m = report.messages;
  const marks = { added: '+', modified: '~', deleted: '-' } as const;
  const files = report.changes.map(
    (c) =>
      `${' '.repeat(LABEL + 4)}${marks[c.kind]} ${c.path}${c.kind === 'deleted' ? '' : ` (${bytes(c.bytes)})`}`,
  );
  const dashboard = options.isKept
    ? `${options.dashboardUrl} (the hub keeps running; Ctrl-C stops it)`
    : `${options.dashboardUrl} (stopped with the run; --keep keeps it up)`;
  return [
    '',
    'summary',
    row('result', resultLine(report)),
    row('changed', `${report.changes.length} file(s) in ${shownPath(report.projectDir, options.cwd)}`),
    ...files,
    row(
      'messages',
      `${m.sent} sent · ${m.acked} acked · ${m.nacked} nacked for a retry · ${m.deadLettered} dead-lettered · ` +
        `${m.requeued} retried from the dead letters`,
    ),
    row('retries', retryLine(report)),
    row('time', `${(report.durationMs / 1000).toFixed(1)} s`),
    row('dashboard', dashboard),
  ];
}
