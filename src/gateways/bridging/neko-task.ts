import type { Envelope, EnvelopeInput } from '../../core/envelope.js';
import { isTerminalState, type TaskChange } from '../../tasks/task-record.js';
import { isPluginChannel, type Channel } from '../../teams/executor/channel.js';
import type { DispatchPlan } from '../../teams/executor/dispatcher.js';
import { channelAgentName, publicTask } from '../neko/index.js';
import { originHeaders } from './origin-protocol.js';
import { RESULT_TYPE } from './yadon-task.js';

/** Task `meta` keys remembering the bus message a task was started for (meta never goes on a wire). */
const REPLY_TO = 'busReplyTo';
const MESSAGE_ID = 'busMessageId';

function paramsOf(group: Channel['group'], instruction: string): Record<string, unknown> {
  if (group === 'computer_use') return { instruction, screenshot: null };
  if (group === 'openclaw') return { description: instruction, attachment_count: 0 };
  return { instruction };
}

/**
 * The N.E.K.O. task a bus message addressed to a channel's agent (`neko-<channel id>`) runs as
 * (docs/bridging.md): task type = the channel's group, params as an assessment writes them for that
 * group with instruction = the body unchanged, session key (`lanlan_name`) = the sender, conversation =
 * the thread. Null for a `result` (a reply is never run) and for a plugin channel, whose entries need
 * arguments a message does not carry.
 */
export function nekoTaskOf(
  envelope: Pick<Envelope, 'id' | 'from' | 'type' | 'body' | 'thread'>,
  channel: Channel,
): DispatchPlan | null {
  if (envelope.type === RESULT_TYPE || isPluginChannel(channel)) return null;
  return {
    channel,
    type: channel.group,
    params: paramsOf(channel.group, envelope.body),
    task: {
      instruction: envelope.body,
      sessionKey: envelope.from,
      ...(envelope.thread !== undefined && { conversationId: envelope.thread }),
    },
    meta: { method: 'bus', [REPLY_TO]: envelope.from, [MESSAGE_ID]: envelope.id },
  };
}

/**
 * The answer to the sender of a task started by {@link nekoTaskOf}, once the task reaches its first
 * terminal state: type `result`, body = the task as N.E.K.O.'s GET /tasks/{id} shows it (JSON), thread
 * = the message id, from = the channel's agent. Null for every other change and every other task.
 * The id is fixed by the task, so a repeat is a bus duplicate.
 */
export function nekoResultEnvelope(change: TaskChange): EnvelopeInput | null {
  const { task, previous, reason } = change;
  const to = task.meta[REPLY_TO];
  const messageId = task.meta[MESSAGE_ID];
  if (typeof to !== 'string' || typeof messageId !== 'string' || reason === 'deleted') return null;
  if (!isTerminalState(task.state) || (previous !== null && isTerminalState(previous.state))) return null;
  return {
    id: `nr-${task.id}`,
    from: channelAgentName(task.channel ?? 'unknown'),
    to,
    type: RESULT_TYPE,
    thread: messageId,
    headers: originHeaders('neko'),
    body: JSON.stringify(publicTask(task)),
  };
}
