import type { RunResult } from '../runs/run-engine.js';
import { httpSetup } from './gateway-setups.js';
import { openHub, type Hub } from './hub.js';
import { isFinishedRun, RunLedger, type RunRecord } from '../runs/run-record.js';
import { RunOwners } from '../runs/run-owner.js';
import {
  ESCALATION_CHOICES,
  parseChoice,
  runMailbox,
  type EscalationChoice,
} from '../runs/turn-escalations.js';
import { MusubiError } from '../core/errors.js';
import {
  executeOnBus,
  prepareRun,
  runHubOptions,
  withRunLedger,
  type RunExecutionOptions,
  type RunRequest,
} from './run-execution.js';
import { startConfiguredHub } from './start-configured-hub.js';

export { runStoreOf, withRunLedger, type RunRequest } from './run-execution.js';

/** Options of {@link startRun} and {@link resumeRun}. */
export interface StartRunOptions extends RunExecutionOptions {
  /** Serve the dashboard on the run's store while it runs (port 0: any free port); its URL goes to `onDashboard`. */
  readonly dashboardPort?: number;
  readonly onDashboard?: (url: string) => void;
}

/** Opens the run store's hub (with the dashboard when asked) and runs `record` on it. */
async function execute(o: StartRunOptions, record: RunRecord, isNew: boolean): Promise<RunResult> {
  const { gitDir, hub: base } = await runHubOptions(o, record.repo);
  let hub: Hub;
  if (o.dashboardPort === undefined) hub = await openHub(base);
  else {
    const configured = await startConfiguredHub({
      ...base,
      env: o.env,
      installed: o.installed,
      gateways: { http: { ...httpSetup(base.config, record.repo, o.env), port: o.dashboardPort } },
    });
    hub = configured;
    const url = configured.byKind.http?.loginUrl();
    if (url !== undefined) o.onDashboard?.(url);
  }
  try {
    return await executeOnBus(o, record, isNew, hub.bus, gitDir);
  } finally {
    await hub.close();
  }
}

/**
 * Starts `musubi run`: checks the repository, the team and the agents (see `prepareRun`), records the
 * run and runs it to its end on the branch `musubi/<run-id>` from the current HEAD.
 */
export async function startRun(o: StartRunOptions, request: RunRequest): Promise<RunResult> {
  return execute(o, await prepareRun(o, request), true);
}

/**
 * `musubi run --resume <id>`: continues a run from its last finished step (a finished run is returned
 * as it is). A raised budget replaces the recorded one.
 */
export async function resumeRun(
  o: StartRunOptions,
  repo: string,
  id: string,
  budget: { readonly usd?: number; readonly tokens?: number } = {},
): Promise<RunResult> {
  const record = await withRunLedger(o, repo, (ledger) => ledger.get(id));
  if (isFinishedRun(record.status)) return { record };
  return execute(o, { ...record, budget: { ...record.budget, ...budget } }, false);
}

/**
 * `musubi runs answer <run> <choice>`: answers a turn of a live run that the bus gave up on, through the
 * run's mailbox. USAGE_INVALID for a choice other than retry, skip or abort, or when several turns wait
 * and `turn` names none of them; NOT_FOUND when no turn of the run waits, or its owner is not running
 * (a resume asks again).
 */
export async function answerRun(
  o: Pick<StartRunOptions, 'config' | 'env' | 'logger' | 'clock'>,
  repo: string,
  id: string,
  answer: string,
  turn?: string,
): Promise<{ readonly choice: EscalationChoice; readonly turn: string }> {
  const choice = parseChoice(answer);
  if (choice === undefined || answer.trim().toLowerCase() !== choice)
    throw new MusubiError('USAGE_INVALID', `answer ${ESCALATION_CHOICES.join(', ')}, not '${answer}'`);
  const hub = await openHub((await runHubOptions(o, repo)).hub);
  try {
    const { bus } = hub;
    const record = await new RunLedger(bus.kv).get(id);
    const waiting = (await bus.listDeadLetters()).filter(
      (d) => d.mailbox.endsWith(`.${record.id}`) && d.envelope.from === runMailbox(record.id),
    );
    const titled = waiting.map((d) => `${d.envelope.id} (${d.envelope.headers['turn'] ?? d.mailbox})`);
    if (waiting.length === 0)
      throw new MusubiError('NOT_FOUND', `no turn of run ${record.id} waits for an answer`);
    if ((await new RunOwners({ kv: bus.kv, clock: o.clock }).holderOf(record.id)) === undefined)
      throw new MusubiError(
        'NOT_FOUND',
        `run ${record.id} is not running; resume it (musubi run --resume ${record.id}) and it asks again about ${titled.join(', ')}`,
      );
    const target =
      turn === undefined
        ? waiting.length === 1
          ? waiting[0]
          : undefined
        : waiting.find((d) => d.envelope.id === turn || d.envelope.headers['turn'] === turn);
    if (target === undefined)
      throw new MusubiError(
        'USAGE_INVALID',
        turn === undefined
          ? `${waiting.length} turns of run ${record.id} wait for an answer; name one with --turn: ${titled.join(', ')}`
          : `no turn '${turn}' of run ${record.id} waits for an answer; these do: ${titled.join(', ')}`,
      );
    await bus.send({
      to: runMailbox(record.id),
      from: 'human',
      type: 'answer',
      body: choice,
      thread: target.envelope.id,
    });
    return { choice, turn: target.envelope.headers['turn'] ?? target.envelope.id };
  } finally {
    await hub.close();
  }
}
