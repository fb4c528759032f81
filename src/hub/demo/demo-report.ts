import type { AgentBackend } from '../../agents/agent-runner.js';
import type { Bus } from '../../bus/bus.types.js';
import type { FileChange } from './file-changes.js';
import type { SampleTestRun, TestCounts } from './sample-tests.js';
import type { ChangelogOutcome } from './scribe.js';
import type { TestVerdict } from './test-round.js';
import type { YadonJobResult } from './yadon-job.js';

/** Message traffic of one run, counted from the bus's event log. */
export interface MessageCounts {
  readonly sent: number;
  readonly claimed: number;
  readonly acked: number;
  /** Given back for another attempt after a failure (each one is a retry with backoff). */
  readonly nacked: number;
  readonly deadLettered: number;
  /** Moved back from the dead letters. */
  readonly requeued: number;
  readonly escalations: number;
}

/** Everything the demo's summary says about one run. */
export interface DemoReport {
  readonly backend: AgentBackend;
  readonly goalTitle: string;
  /** Files of the scratch project the team added, modified or deleted. */
  readonly changes: readonly FileChange[];
  /** The sample's tests before the team started (undefined when that run failed to start). */
  readonly testsBefore: TestCounts | undefined;
  /** The sample's tests at the end (undefined when the run ended before). */
  readonly testsAfter: SampleTestRun | undefined;
  readonly yadon: YadonJobResult | undefined;
  readonly verdict: TestVerdict | undefined;
  readonly changelog: ChangelogOutcome | undefined;
  readonly messages: MessageCounts;
  readonly durationMs: number;
  /** The goal was met: the sample's own tests pass at the end and no step failed. */
  readonly isSuccess: boolean;
  /** Why the run stopped early, if it did. */
  readonly error?: string;
  readonly projectDir: string;
}

const PAGE = 1_000;

/** Counts the message events in the bus's log (the demo's store is fresh, so that is this run). */
export async function countMessages(bus: Pick<Bus, 'readEvents'>): Promise<MessageCounts> {
  const counts = { sent: 0, claimed: 0, acked: 0, nacked: 0, deadLettered: 0, requeued: 0, escalations: 0 };
  const key: Readonly<Record<string, keyof typeof counts>> = {
    'message.sent': 'sent',
    'message.claimed': 'claimed',
    'message.acked': 'acked',
    'message.nacked': 'nacked',
    'message.dead_lettered': 'deadLettered',
    'message.requeued': 'requeued',
    escalation: 'escalations',
  };
  for (let after = 0; ;) {
    const events = await bus.readEvents({ after, limit: PAGE });
    for (const event of events) {
      const k = key[event.type];
      if (k !== undefined) counts[k]++;
    }
    const last = events.at(-1);
    if (last === undefined || events.length < PAGE) return counts;
    after = last.cursor;
  }
}
