import { randomBytes } from 'node:crypto';

const TASK_ID_PATTERN = /^task-\d{8}-\d{6}-[0-9a-f]{4}$/;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** True when `id` has the generated shape `task-YYYYMMDD-HHMMSS-xxxx`. */
export function isGeneratedTaskId(id: string): boolean {
  return TASK_ID_PATTERN.test(id);
}

/**
 * A new task id `task-YYYYMMDD-HHMMSS-xxxx` (local time, 4 random lowercase hex digits; spec yadon.md
 * 3.7). Uniqueness is the caller's: redraw while the id is already known.
 */
export function generateTaskId(
  nowMs: number,
  random: () => string = () => randomBytes(2).toString('hex'),
): string {
  const d = new Date(nowMs);
  const date = `${pad(d.getFullYear(), 4)}${pad(d.getMonth() + 1)}${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`;
  return `task-${date}-${time}-${random()}`;
}
