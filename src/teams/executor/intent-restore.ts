import type { Clock } from '../../core/clock.js';
import {
  FLAG_KEYS,
  GROUP_FLAG_KEYS,
  type ChannelAvailability,
  type ChannelGroup,
  type FlagKey,
} from './channel.js';
import { AUTO_DISABLED_CODES } from './control-state.js';
import type { FlagControl } from './flag-control.js';
import { sleep } from '../../core/sleep.js';

/** Probe schedule of restored computer_use / browser_use groups. */
export interface RestoreProbeTimings {
  readonly attempts: number;
  readonly timeoutMs: number;
  readonly spacingMs: number;
}

/** Spec 4.5: up to 3 probes, 6 s timeout each, 7 s apart. */
export const DEFAULT_RESTORE_PROBES: RestoreProbeTimings = {
  attempts: 3,
  timeoutMs: 6_000,
  spacingMs: 7_000,
};

async function probeWithin(
  probe: (group: ChannelGroup) => Promise<ChannelAvailability>,
  group: ChannelGroup,
  clock: Clock,
  timeoutMs: number,
): Promise<boolean> {
  let timer: { cancel(): void } | undefined;
  const timedOut = new Promise<boolean>(
    (resolve) => (timer = clock.setTimer(() => resolve(false), timeoutMs)),
  );
  try {
    return await Promise.race([probe(group).then((a) => a.ready), timedOut]);
  } finally {
    timer?.cancel();
  }
}

/**
 * The intent restore of spec 4.5, run on the first `agent_intent_restore_signal`: when the persisted
 * master intent is on, switch the master on and re-apply the persisted sub-flags, all without persisting
 * intent again. The computer_use and browser_use groups are probed first (up to `attempts` times); on
 * final failure their intent is cleared with an `AGENT_AUTO_DISABLED_*` notification.
 */
export async function restoreIntent(
  control: FlagControl,
  deps: {
    readonly clock: Clock;
    readonly probe: (group: ChannelGroup) => Promise<ChannelAvailability>;
    readonly timings?: RestoreProbeTimings;
  },
): Promise<void> {
  const { intent, profile } = control.state;
  if (intent.analyzerEnabled !== true) return;
  await control.setAgentEnabled(true, profile, { persistIntent: false });
  const timings = deps.timings ?? DEFAULT_RESTORE_PROBES;
  const requested: Partial<Record<FlagKey, boolean>> = {};
  for (const key of FLAG_KEYS) {
    const value = intent.flags[key];
    if (value !== undefined) requested[key] = value;
  }
  const probed: ChannelGroup[] = ['computer_use', 'browser_use'];
  control.setFlags(
    Object.fromEntries(
      Object.entries(requested).filter(([k]) => !probed.some((g) => GROUP_FLAG_KEYS[g] === k)),
    ),
    { persistIntent: false },
  );
  for (const group of probed) {
    const key = GROUP_FLAG_KEYS[group];
    if (requested[key] !== true) continue;
    let isReady = false;
    for (let attempt = 0; attempt < timings.attempts && !isReady; attempt++) {
      if (attempt > 0) await sleep(deps.clock, timings.spacingMs);
      isReady = await probeWithin(deps.probe, group, deps.clock, timings.timeoutMs);
    }
    if (isReady) {
      control.setFlags({ [key]: true }, { persistIntent: false });
    } else {
      control.clearIntent(key);
      control.notify(AUTO_DISABLED_CODES[group] ?? 'AGENT_AUTO_DISABLED_COMPUTER', { flag: key });
    }
  }
}
