import type { Clock } from '../../core/clock.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import { isPluginChannel, type Channel, type PluginChannel } from './channel.js';
import { assessChannels, type ChannelVerdict } from './channel-assessment.js';
import { conversationText, latestText } from './conversation.js';
import type { DispatchPlan } from './dispatcher.js';
import type { FlagControl } from './flag-control.js';
import type { LlmSettings } from './llm-call.js';
import { selectPlugin, type PluginDecision } from './plugin-selection.js';
import type { SessionMemory } from './session-memory.js';
import { redactCancelled, trackerContext } from './task-tracker.js';
import type { AnalyzeInput } from './turn-intake.js';

/** Prefix of the notification sent when the assessment fails. */
export const ASSESSMENT_FAILED_PREFIX = '⚠️ Agent评估失败: ';
const NOTIFY_ON = /error|timed out|failed/i;

/** What {@link analyzeTurn} needs from the executor. */
export interface TurnContext {
  readonly flags: FlagControl;
  /** Channels in priority order. */
  readonly channels: readonly Channel[];
  readonly llm: LlmSettings | null;
  readonly sessions: SessionMemory;
  readonly clock: Clock;
  readonly dispatch: (plan: DispatchPlan) => Promise<TaskRecord | null>;
  readonly notify: (sessionKey: string, text: string) => void;
  /** Aborted when the server stops: LLM turns end early. */
  readonly signal?: AbortSignal;
}

/** The fingerprints an admitted turn is tracked by. */
export interface TurnTrigger {
  readonly fingerprint: string;
  readonly triggerSignature: string;
}

async function readyChannels(ctx: TurnContext): Promise<Channel[]> {
  const enabled = ctx.channels.filter((c) => ctx.flags.isGroupEnabled(c.group));
  const probes = await Promise.all(
    enabled.map((c) => c.isAvailable().catch(() => ({ ready: false, reasons: ['probe failed'] }))),
  );
  return enabled.filter((_, i) => probes[i]?.ready === true);
}

function assessmentInput(ctx: TurnContext, input: AnalyzeInput): string {
  const now = ctx.clock.now();
  const records = ctx.sessions.get(input.sessionKey).records;
  const messages = redactCancelled(input.messages, records, now);
  const context = trackerContext(records, now);
  const text = conversationText(messages, { proactive: input.isProactive });
  return context === null ? text : `${text}\nsystem: ${context.text}`;
}

function channelPlan(
  channel: Channel,
  verdict: ChannelVerdict,
  input: AnalyzeInput,
  request: string,
): Omit<DispatchPlan, 'meta'> {
  const instruction = verdict.taskDescription.trim() || request;
  const images = input.messages.findLast((m) => m.role === 'user')?.attachmentUrls.length ?? 0;
  const params: Record<string, unknown> =
    channel.group === 'computer_use'
      ? { instruction, screenshot: null }
      : channel.group === 'openclaw'
        ? { description: instruction, attachment_count: images }
        : { instruction };
  return { channel, type: channel.group, params, task: taskBase(input, instruction) };
}

function pluginPlan(
  channel: PluginChannel,
  decision: PluginDecision,
  input: AnalyzeInput,
): Omit<DispatchPlan, 'meta'> {
  const pluginId = decision.pluginId ?? '';
  const entryId = decision.entryId ?? 'run';
  const plugin = channel.catalogue().find((p) => p.id === pluginId);
  const params: Record<string, unknown> = {
    plugin_id: pluginId,
    entry_id: entryId,
    ...(plugin?.name !== undefined && { plugin_name: plugin.name }),
    ...(decision.taskDescription !== '' && { description: decision.taskDescription }),
  };
  return {
    channel,
    type: 'user_plugin',
    params,
    task: {
      ...taskBase(input, decision.taskDescription),
      plugin: { pluginId, entryId, args: decision.args },
    },
  };
}

function taskBase(input: AnalyzeInput, instruction: string): DispatchPlan['task'] {
  return {
    instruction,
    sessionKey: input.sessionKey,
    ...(input.conversationId !== undefined && { conversationId: input.conversationId }),
  };
}

/**
 * The inner part of spec neko.md 4.1 step 6, run under the analyze lock: re-check the master switch,
 * redact cancelled requests and add the tracker context, probe the enabled channels, run the plugin
 * selection and ONE channel assessment in parallel, decide (a plugin decision first, then the first
 * channel in priority order) and dispatch. Resolves the created task, or null.
 */
export async function analyzeTurn(
  ctx: TurnContext,
  input: AnalyzeInput,
  trigger: TurnTrigger,
): Promise<TaskRecord | null> {
  if (!ctx.flags.state.analyzerEnabled || ctx.llm === null) return null;
  const ready = await readyChannels(ctx);
  if (ready.length === 0) return null;
  const conversation = assessmentInput(ctx, input);
  const request =
    (input.isProactive ? latestText(input.messages, 'assistant') : latestText(input.messages, 'user')) ?? '';
  const pluginChannels = ready.filter(isPluginChannel);
  const catalogue = pluginChannels.flatMap((c) => [...c.catalogue()]);
  const offers = ready.filter((c) => !isPluginChannel(c));
  const [plugins, assessment] = await Promise.all([
    catalogue.length > 0 ? selectPlugin(ctx.llm, catalogue, conversation, request, ctx.signal) : undefined,
    assessChannels(ctx.llm, offers, conversation, ctx.signal),
  ]);
  for (const failure of [plugins, assessment]) {
    if (failure?.ok === false && NOTIFY_ON.test(failure.reason)) {
      ctx.notify(input.sessionKey, ASSESSMENT_FAILED_PREFIX + failure.reason.slice(0, 200));
    }
  }
  let plan: Omit<DispatchPlan, 'meta'> | undefined;
  const decision = plugins?.ok === true ? plugins.decision : null;
  if (decision !== null && decision.hasTask && decision.pluginId !== null && decision.entryId !== null) {
    if (!decision.canExecute) return null; // an explicit "no" from the plugin side suppresses every channel
    const owner = pluginChannels.find((c) => c.catalogue().some((p) => p.id === decision.pluginId));
    if (owner !== undefined) plan = pluginPlan(owner, decision, input);
  }
  if (plan === undefined && assessment.ok) {
    const chosen = offers.find((c) => assessment.verdicts.get(c.id)?.canExecute === true);
    const verdict = chosen === undefined ? undefined : assessment.verdicts.get(chosen.id);
    if (chosen !== undefined && verdict !== undefined) plan = channelPlan(chosen, verdict, input, request);
  }
  if (plan === undefined || ctx.signal?.aborted === true) return null;
  const pluginTarget = plan.task.plugin;
  const method =
    pluginTarget === undefined ? plan.channel.id : `plugin:${pluginTarget.pluginId}.${pluginTarget.entryId}`;
  return ctx.dispatch({
    ...plan,
    meta: {
      triggerFingerprint: trigger.fingerprint,
      triggerSignature: trigger.triggerSignature,
      method,
      ...(input.conversationId !== undefined && { conversationId: input.conversationId }),
    },
  });
}
