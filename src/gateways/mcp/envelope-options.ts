import type { z } from 'zod';
import type { EnvelopeInput } from '../../core/envelope.js';
import { headersField, messageIdField, priorityField, threadField } from './input-fields.js';

/** The optional envelope fields `send` and `broadcast` accept (priority, thread, headers, id). */
export const envelopeOptionsInput = {
  priority: priorityField,
  thread: threadField,
  headers: headersField,
  id: messageIdField,
};

type EnvelopeOptionsArgs = {
  readonly [K in keyof typeof envelopeOptionsInput]?: z.infer<(typeof envelopeOptionsInput)[K]>;
};

/** The optional envelope fields of validated tool args, leaving out the ones not given. */
export function envelopeOptions(
  args: EnvelopeOptionsArgs,
): Pick<EnvelopeInput, 'priority' | 'thread' | 'headers' | 'id'> {
  return {
    ...(args.priority === undefined ? {} : { priority: args.priority }),
    ...(args.thread === undefined ? {} : { thread: args.thread }),
    ...(args.headers === undefined ? {} : { headers: args.headers }),
    ...(args.id === undefined ? {} : { id: args.id }),
  };
}
