/**
 * Timestamps in the forms IGNITE writes, in the process's local time zone (`TZ` honoured): the RFC 2822
 * `Date:` header, ISO 8601 with a colon offset (3.3), and the 16-digit microsecond file-name stamp.
 */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function offset(date: Date, separator: string): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${separator}${pad(abs % 60)}`;
}

/** `Mon, 30 Nov 2026 03:15:31 +0900` for `ms` (epoch milliseconds) in local time. */
export function formatRfc2822(ms: number): string {
  const d = new Date(ms);
  return (
    `${DAYS[d.getDay()] ?? ''}, ${pad(d.getDate())} ${MONTHS[d.getMonth()] ?? ''} ${d.getFullYear()} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${offset(d, '')}`
  );
}

/** `2026-11-30T03:15:31+09:00` for `ms` in local time (seconds precision). */
export function formatIsoLocal(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${offset(d, ':')}`
  );
}

/** `2026-11-30 03:15:31` in local time (progress_update_latest.txt, without the zone name). */
export function formatLocalDateTime(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/**
 * Epoch milliseconds of an RFC 2822 or ISO 8601 timestamp, or null when it does not parse. Used for
 * `Date:` (name normalisation) and `X-IGNITE-Next-Retry-After` (restart).
 */
export function parseTimestamp(text: string): number | null {
  if (!/\d{4}/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}
