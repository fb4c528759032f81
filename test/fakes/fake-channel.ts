import type {
  Channel,
  ChannelAvailability,
  ChannelConcurrency,
  ChannelGroup,
  ChannelRunOptions,
  ChannelRunResult,
  ChannelTask,
} from '../../src/teams/executor/channel.js';

/** One run a {@link FakeChannel} saw; `finish` ends it with a result (the default answer otherwise). */
export interface FakeRun {
  readonly task: ChannelTask;
  readonly options: ChannelRunOptions;
  finish(result?: Partial<ChannelRunResult>): void;
  fail(error: Error): void;
}

/** Settings of {@link FakeChannel}. */
export interface FakeChannelOptions {
  readonly id: string;
  readonly group: ChannelGroup;
  readonly concurrency?: ChannelConcurrency;
  readonly description?: string;
  /** Runs wait for `finish()` when true; otherwise they succeed at once. */
  readonly isManual?: boolean;
  /** A manual run normally ends `cancelled` when aborted; with this it keeps waiting (a late result). */
  readonly isIgnoringAbort?: boolean;
  readonly availability?: ChannelAvailability;
}

/**
 * A channel driven by the test: records runs and cancels; with `isManual` each run waits until the test
 * calls `finish` or `fail`, or until it is aborted (unless `isIgnoringAbort`: a slow remote answering late).
 */
export class FakeChannel implements Channel {
  readonly id: string;
  readonly kind = 'fake';
  readonly group: ChannelGroup;
  readonly description: string;
  readonly concurrency: ChannelConcurrency;
  readonly runs: FakeRun[] = [];
  readonly cancels: string[] = [];
  availability: ChannelAvailability;
  readonly #isManual: boolean;
  readonly #isIgnoringAbort: boolean;

  constructor(options: FakeChannelOptions) {
    this.id = options.id;
    this.group = options.group;
    this.concurrency = options.concurrency ?? 'unlimited';
    this.description = options.description ?? `does ${options.id} things`;
    this.availability = options.availability ?? { ready: true, reasons: [] };
    this.#isManual = options.isManual === true;
    this.#isIgnoringAbort = options.isIgnoringAbort === true;
  }

  isAvailable(): Promise<ChannelAvailability> {
    return Promise.resolve(this.availability);
  }

  run(task: ChannelTask, options: ChannelRunOptions): Promise<ChannelRunResult> {
    return new Promise((resolve, reject) => {
      const run: FakeRun = {
        task,
        options,
        finish: (result = {}) => resolve({ success: true, summary: `done ${task.instruction}`, ...result }),
        fail: reject,
      };
      this.runs.push(run);
      if (!this.#isManual) run.finish();
      else if (!this.#isIgnoringAbort) {
        options.signal.addEventListener(
          'abort',
          () => run.finish({ success: false, summary: 'Cancelled', status: 'cancelled' }),
          {
            once: true,
          },
        );
      }
    });
  }

  cancel(taskId: string): Promise<void> {
    this.cancels.push(taskId);
    return Promise.resolve();
  }
}
