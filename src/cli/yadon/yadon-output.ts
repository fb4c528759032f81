import { pyJson } from '../../core/python/json-dumps.js';

/** ANSI sequences of spec yadon.md 6. */
export const RED = '\u001b[1;31m';
export const YELLOW = '\u001b[1;33m';
export const RESET = '\u001b[0m';

/** `\033[1;31m<label>\033[0m: <text>` */
export function redLine(label: string, text: string): string {
  return `${RED}${label}${RESET}: ${text}\n`;
}

/** One envelope line `{"success": …, "message": …, "data": …[, "task_id": …]}` in Python's JSON style. */
export function envelopeLine(envelope: {
  readonly success: boolean;
  readonly message: string;
  readonly data: unknown;
  readonly taskId?: string;
}): string {
  const value = {
    success: envelope.success,
    message: envelope.message,
    data: envelope.data ?? null,
    ...(envelope.taskId !== undefined && { task_id: envelope.taskId }),
  };
  return `${pyJson(value, { nonFinite: 'null' })}\n`;
}

/** The JSON object a reply parsed to, or undefined when it is not an object. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value));
}
