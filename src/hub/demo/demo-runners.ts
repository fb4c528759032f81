import type { AgentBackend, AgentRunner } from '../../agents/agent-runner.js';
import { createAgentRunner } from '../../agents/create-agent-runner.js';
import type { ChildReaper } from '../../agents/process/child-reaper.js';
import { lookupAlias } from '../../agents/selection/backend-aliases.js';
import type { AgentDirectory, AgentUpdate } from '../../bus/agent-directory.js';
import type { Logger } from '../../core/logger.js';
import { DEMO_TEAM, type DemoMember } from './demo-config.js';
import { failFirstTurns, observeTurns, type TurnObserver } from './turn-hooks.js';

/** A fault the demo injects into one agent: its first `count` turns fail. */
export interface InjectedFault {
  readonly agent: string;
  readonly count: number;
  readonly reason: string;
}

/** Options of {@link createDemoRunners}. */
export interface DemoRunnersOptions {
  /** Every member with a tier runs on this backend (the scripted agent unless `--agent` chose a CLI). */
  readonly backend: AgentBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  readonly directory: Pick<AgentDirectory, 'update'>;
  readonly logger: Logger;
  /** Progress observers by agent name. */
  readonly observers?: Readonly<Record<string, TurnObserver>>;
  readonly fault?: InjectedFault;
}

/**
 * Registers the demo team in the agent directory (protocol, role, backend, team `demo`), so the
 * dashboard shows every member whatever protocol it speaks. Resolves once every row is written.
 */
export async function registerDemoTeam(
  directory: Pick<AgentDirectory, 'update'>,
  backend: AgentBackend,
): Promise<void> {
  for (const member of DEMO_TEAM) {
    await directory.update(member.name, {
      protocol: member.protocol,
      role: member.role,
      team: 'demo',
      state: 'idle',
      backend: member.tier === undefined ? 'musubi demo' : backend,
    });
  }
}

function member(name: string): DemoMember & { readonly tier: NonNullable<DemoMember['tier']> } {
  const found = DEMO_TEAM.find((m) => m.name === name);
  if (found?.tier === undefined) throw new RangeError(`${name} is not an agent of the demo team`);
  return { ...found, tier: found.tier };
}

/**
 * Builds the runner of each demo agent on demand (cached): the chosen backend with the model of the
 * agent's tier (claude: sonnet for the manager, haiku for the rest), the injected fault if it is this
 * agent's, then the observers — the agent directory (busy / idle / error) and the progress tracker.
 */
export function createDemoRunners(options: DemoRunnersOptions): (agent: string) => AgentRunner {
  const runners = new Map<string, AgentRunner>();
  const log = options.logger.child({ component: 'demo.runners' });
  // One chain per agent: updates land in turn order, so a late `busy` never overwrites the final `idle`.
  const chains = new Map<string, Promise<void>>();
  const report = (agent: string, update: AgentUpdate): void => {
    const next = (chains.get(agent) ?? Promise.resolve()).then(async () => {
      await options.directory.update(agent, update).catch((err: unknown) => {
        log.warn({ err, agentId: agent }, 'agent directory update failed');
      });
    });
    chains.set(agent, next);
  };
  return (agent) => {
    const cached = runners.get(agent);
    if (cached !== undefined) return cached;
    const model = lookupAlias(options.backend)?.models?.[member(agent).tier];
    let runner = createAgentRunner({
      backend: options.backend,
      env: options.env,
      reaper: options.reaper,
      ...(model !== undefined && { model }),
    });
    const fault = options.fault;
    if (fault?.agent === agent) runner = failFirstTurns(runner, fault.count, fault.reason);
    const progress = options.observers?.[agent];
    runner = observeTurns(runner, {
      onStart: (input) => {
        report(agent, { state: 'busy', currentTask: input.prompt.split('\n')[0]?.slice(0, 200) ?? '' });
        progress?.onStart?.(input);
      },
      onEnd: (input, result) => {
        const isFailed = result === undefined || result.isError;
        report(agent, { state: isFailed ? 'error' : 'idle', currentTask: null });
        progress?.onEnd?.(input, result);
      },
    });
    runners.set(agent, runner);
    return runner;
  };
}
