import type { Clock } from '../../../core/clock.js';
import type {
  ChannelAvailability,
  ChannelGroup,
  ChannelProgress,
  ChannelRunOptions,
  ChannelRunResult,
  ChannelTask,
  PluginChannel,
} from '../channel.js';
import { visibleEntries, type PluginEntry, type PluginInfo } from '../plugin-catalogue.js';
import { checkPluginArgs } from './plugin-args.js';
import { toChannelResult, type PluginHandlerResult } from './plugin-result.js';

/** Default entry timeout (env `NEKO_PLUGIN_EXECUTION_TIMEOUT` overrides; <= 0 or null = none). */
export const DEFAULT_PLUGIN_TIMEOUT_MS = 30_000;
/** The server waits at least this long for a handler, whatever the entry timeout. */
const MIN_HARD_WAIT_MS = 315_000;
const HARD_WAIT_SLACK_MS = 15_000;

/** One call of a plugin handler. */
export interface PluginInvocation {
  readonly taskId: string;
  readonly entryId: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** Aborted on cancel, stop or entry timeout. */
  readonly signal: AbortSignal;
  readonly onProgress: (progress: ChannelProgress) => void;
}

/** Runs a plugin's entries: in-process code, a command (see plugin-folder.ts) or an HTTP endpoint. */
export type PluginHandler = (call: PluginInvocation) => Promise<PluginHandlerResult>;

/** A catalogue record with the handler that runs it. */
export interface LoadedPlugin {
  readonly info: PluginInfo;
  readonly handler: PluginHandler;
}

/** Settings of {@link createPluginChannel}. */
export interface PluginChannelOptions {
  readonly id: string;
  readonly description?: string;
  readonly group?: ChannelGroup;
  readonly plugins: readonly LoadedPlugin[];
  readonly clock: Clock;
  /** Entry timeout when the entry names none; null = none. */
  readonly defaultTimeoutMs?: number | null;
}

function failed(message: string): ChannelRunResult {
  return { success: false, summary: message, error: message, status: 'failed' };
}

/** Exact id, else the one entry matching case-insensitively; `run` when none is named. */
function resolveEntry(plugin: PluginInfo, entryId: string): PluginEntry | undefined {
  const entries = plugin.entries.length === 0 ? visibleEntries(plugin) : plugin.entries;
  const exact = entries.find((e) => e.id === entryId);
  if (exact !== undefined) return exact;
  const loose = entries.filter((e) => e.id.toLowerCase() === entryId.toLowerCase());
  return loose.length === 1 ? loose[0] : undefined;
}

function timeoutOf(entry: PluginEntry, fallback: number | null): number | null {
  if (entry.timeout === null) return null;
  const ms = entry.timeout === undefined ? fallback : entry.timeout * 1000;
  return ms === null || ms <= 0 ? null : ms;
}

/**
 * The plugin channel (group `user_plugin`, unlimited): runs one entry of one plugin. Arguments are
 * validated against the entry's JSON Schema first (`invalid args: <detail>`); an unknown entry id is
 * refused unless exactly one entry matches it case-insensitively. The entry timeout aborts the handler;
 * a handler that ignores the abort is given up on after max(timeout + 15 s, 315 s).
 */
export function createPluginChannel(options: PluginChannelOptions): PluginChannel {
  const defaultTimeoutMs =
    options.defaultTimeoutMs === undefined ? DEFAULT_PLUGIN_TIMEOUT_MS : options.defaultTimeoutMs;
  const catalogue = options.plugins.map((p) => p.info);

  const invoke = async (
    plugin: LoadedPlugin,
    entry: PluginEntry,
    task: ChannelTask,
    run: ChannelRunOptions,
    args: Readonly<Record<string, unknown>>,
  ): Promise<ChannelRunResult> => {
    if (run.signal.aborted) return { ...failed('Cancelled'), status: 'cancelled' };
    const timeoutMs = timeoutOf(entry, defaultTimeoutMs);
    const hardWaitMs = Math.max((timeoutMs ?? 0) + HARD_WAIT_SLACK_MS, MIN_HARD_WAIT_MS);
    const controller = new AbortController();
    const timers = [
      timeoutMs === null
        ? undefined
        : options.clock.setTimer(() => controller.abort(new Error('Timed out')), timeoutMs),
    ];
    const signal = AbortSignal.any([run.signal, controller.signal]);
    let giveUp: (result: ChannelRunResult) => void = () => undefined;
    const gaveUp = new Promise<ChannelRunResult>((resolve) => (giveUp = resolve));
    timers.push(options.clock.setTimer(() => giveUp(failed('Timed out')), hardWaitMs));
    // A cancelled task does not wait for its handler: whatever it answers later is dropped.
    const onCancel = (): void => giveUp({ ...failed('Cancelled'), status: 'cancelled' });
    run.signal.addEventListener('abort', onCancel, { once: true });
    try {
      const handled = plugin.handler({
        taskId: task.id,
        entryId: entry.id,
        args,
        signal,
        onProgress: run.onProgress,
      });
      return await Promise.race([
        handled.then(
          (result) =>
            controller.signal.aborted ? failed('Timed out') : toChannelResult(result, plugin.info.id),
          (err: unknown) =>
            failed(
              controller.signal.aborted ? 'Timed out' : err instanceof Error ? err.message : String(err),
            ),
        ),
        gaveUp,
      ]);
    } finally {
      run.signal.removeEventListener('abort', onCancel);
      for (const timer of timers) timer?.cancel();
    }
  };

  return {
    id: options.id,
    kind: 'plugins',
    group: options.group ?? 'user_plugin',
    concurrency: 'unlimited',
    description: options.description ?? 'runs an entry of one of the installed plugins',
    catalogue: () => catalogue,
    isAvailable(): Promise<ChannelAvailability> {
      return Promise.resolve(
        options.plugins.length > 0
          ? { ready: true, reasons: [] }
          : { ready: false, reasons: ['AGENT_NO_PLUGINS_FOUND'] },
      );
    },
    async run(task, run): Promise<ChannelRunResult> {
      const call = task.plugin;
      if (call === undefined) return failed('no plugin named for this task');
      const plugin = options.plugins.find((p) => p.info.id === call.pluginId);
      if (plugin === undefined) return failed(`plugin '${call.pluginId}' not found`);
      const entryId = call.entryId === '' ? 'run' : call.entryId;
      const entry = resolveEntry(plugin.info, entryId);
      if (entry === undefined) return failed(`entry_id '${entryId}' not found in plugin '${plugin.info.id}'`);
      const check = checkPluginArgs(entry.args_schema, { ...call.args });
      if (!check.ok) return failed(`invalid args: ${check.detail}`);
      return invoke(plugin, entry, task, run, call.args);
    },
    cancel: () => Promise.resolve(), // runs are stopped through their AbortSignal
  };
}
