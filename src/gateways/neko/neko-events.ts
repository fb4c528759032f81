import type { AgentDirectory } from '../../bus/agent-directory.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import { GROUP_FLAG_KEYS, type Channel, type FlagKey } from '../../teams/executor/channel.js';
import type { ExecutorEvents, ExecutorTeam } from '../../teams/executor/executor-team.js';
import { notificationEvent, taskResultEvent, taskUpdateEvent, type NekoEvent } from './neko-wire.js';

/** The executor's events as wire events, plus the channels shown as agents (protocol `neko`). */
export interface NekoEvents extends ExecutorEvents {
  /** Lists every channel in the agent directory (`neko-<channel id>`). */
  announce(channels: readonly Channel[]): Promise<void>;
}

/** The directory name of a channel's agent. */
export function channelAgentName(channelId: string): string {
  return `neko-${channelId}`;
}

/**
 * Translates executor events to N.E.K.O. wire events on the agent PUSH socket, and keeps the agent
 * directory's view of each channel (busy while it runs a task) for the dashboard. Directory writes are
 * best effort (logged on failure).
 */
export function createNekoEvents(deps: {
  readonly send: (event: NekoEvent) => void;
  readonly emitStatus: () => void;
  readonly clock: Clock;
  readonly log: Logger;
  readonly directory?: AgentDirectory;
}): NekoEvents {
  const running = new Map<string, Set<string>>();
  const report = (name: string, update: Parameters<AgentDirectory['update']>[1]): void => {
    deps.directory
      ?.update(name, update)
      .catch((err: unknown) => deps.log.warn({ err, agent: name }, 'agent directory not updated'));
  };
  const trackRun = (task: TaskRecord): void => {
    if (task.channel === undefined || deps.directory === undefined) return;
    const ids = running.get(task.channel) ?? new Set<string>();
    running.set(task.channel, ids);
    const wasBusy = ids.size > 0;
    if (task.state === 'running') ids.add(task.id);
    else ids.delete(task.id);
    if (wasBusy !== ids.size > 0 || task.state === 'running') {
      const current = [...ids].at(-1);
      report(channelAgentName(task.channel), {
        protocol: 'neko',
        state: ids.size > 0 ? 'busy' : 'idle',
        currentTask: current ?? null,
      });
    }
  };
  return {
    taskChanged(task) {
      deps.send(taskUpdateEvent(task));
      trackRun(task);
    },
    taskResult(task, result) {
      deps.send(taskResultEvent(task, result, deps.clock.now()));
    },
    notification(sessionKey, text) {
      deps.send(notificationEvent(sessionKey, text));
    },
    stateChanged() {
      deps.emitStatus();
    },
    async announce(channels) {
      for (const c of channels)
        report(channelAgentName(c.id), { protocol: 'neko', state: 'idle', role: c.group, backend: c.kind });
    },
  };
}

/** `enableOnStart`: master on and every group that has channels on, without persisting intent. */
export async function enableEverything(team: ExecutorTeam): Promise<void> {
  await team.flags.setAgentEnabled(true, {}, { persistIntent: false });
  const flags: Partial<Record<FlagKey, boolean>> = {};
  for (const channel of team.channels) flags[GROUP_FLAG_KEYS[channel.group]] = true;
  team.flags.setFlags(flags, { persistIntent: false });
}
