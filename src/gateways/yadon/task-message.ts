import { z } from 'zod';

/** The envelope type of a task submitted through an agent socket. */
export const SOCKET_TASK_TYPE = 'yadon.task';
/** Inputs up to this size travel in the bus message; larger ones (up to 64 MiB) wait in KV. */
const INLINE_INPUT_MAX_BYTES = 256 * 1024;

const taskBodySchema = z.object({
  taskId: z.string(),
  input: z.object({ id: z.string(), instruction: z.string(), projectDir: z.string() }).optional(),
});

/** The body of a `yadon.task` bus message: the task id and, when small enough, the input itself. */
export type TaskMessageBody = z.infer<typeof taskBodySchema>;

/**
 * Encodes a socket task for the agent's mailbox: the input rides inline up to 256 KiB (envelope bodies
 * are capped at 1 MiB), else only the task id and the input waits in KV. Returns the body and where the
 * input went.
 */
export function encodeTaskMessage(input: NonNullable<TaskMessageBody['input']>): {
  body: string;
  isInputInline: boolean;
} {
  const inline = JSON.stringify({ taskId: input.id, input });
  const isInputInline = Buffer.byteLength(inline) <= INLINE_INPUT_MAX_BYTES;
  return { body: isInputInline ? inline : JSON.stringify({ taskId: input.id }), isInputInline };
}

/** Decodes a `yadon.task` body; undefined for anything this gateway did not write. */
export function decodeTaskMessage(body: string): TaskMessageBody | undefined {
  try {
    const parsed = taskBodySchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Not JSON: not a message this gateway wrote; it is skipped.
    return undefined;
  }
}
