import type { BodyFields } from './body-fields.js';
import { formatLocalDateTime } from './mime/mime-time.js';

const NON_FINAL_GAP_MS = 2_000;
const WINDOW_MS = 10_000;
const WINDOW_MAX = 5;

/** One rendered progress_update: the display line (or null when rate-limited) and the latest.txt text. */
export interface ProgressRender {
  readonly line: string | null;
  readonly isFinal: boolean;
  readonly latestText: string;
}

/** The local time zone's abbreviation (`JST`, `UTC`, `CET`), falling back to `GMT+9` forms. */
export function zoneAbbreviation(ms: number): string {
  const pick = (locale: string): string =>
    new Intl.DateTimeFormat(locale, { timeZoneName: 'short' })
      .formatToParts(ms)
      .find((p) => p.type === 'timeZoneName')?.value ?? '';
  const english = pick('en-US');
  if (!/^GMT[+-]/.test(english)) return english;
  const japanese = pick('ja-JP');
  return /^[A-Z]{2,5}$/.test(japanese) ? japanese : english;
}

function truncate(line: string, maxChars: number): string {
  const chars = Array.from(line);
  return chars.length > maxChars ? `${chars.slice(0, maxChars - 3).join('')}...` : line;
}

/**
 * Renders progress_update messages (spec/ignite.md 3.8): `stage=… percent=… message=…`, cut to the
 * maximum length, and rate-limits non-final updates (one per 2 s, at most 5 per 10 s); `final: true`
 * always shows and is not counted. Holds only the recent display times; one instance per monitor.
 */
export class ProgressDisplay {
  readonly #maxChars: number;
  #shown: number[] = [];

  constructor(options: { readonly maxChars: number }) {
    this.#maxChars = options.maxChars;
  }

  /** Renders one update received at `nowMs`; `headers` supply repository/issue when the body lacks them. */
  render(fields: BodyFields, headers: ReadonlyMap<string, string>, nowMs: number): ProgressRender {
    const or = (key: string, fallback: string): string => {
      const v = fields.get(key);
      return v === '' ? fallback : v;
    };
    const message = or('message', fields.get('summary'))
      .replace(/\r\n|[\r\n]/g, ' ')
      .trimEnd();
    const raw = `stage=${or('stage', 'working')} percent=${or('percent', '0')} message=${message}`
      // eslint-disable-next-line no-control-regex -- terminal escapes and other controls never reach the display
      .replace(/[\x00-\x1f\x7f]/g, '');
    const isFinal = /^(true|yes|on)$/i.test(fields.get('final'));
    // eslint-disable-next-line no-control-regex -- control characters other than LF/CR are removed (3.8)
    const summary = fields.get('summary').replace(/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]/g, '');
    const latestText = [
      'Progress Update',
      `- Repository: ${or('repository', headers.get('X-IGNITE-Repository') ?? '') || 'N/A'}`,
      `- Issue: ${or('issue', or('issue_number', headers.get('X-IGNITE-Issue') ?? '')) || '?'}`,
      `- Tasks: ${or('completed', '?')}/${or('total_tasks', '?')}`,
      `- Summary: ${summary === '' ? 'N/A' : summary}`,
      `- Time: ${formatLocalDateTime(nowMs)} ${zoneAbbreviation(nowMs)}`,
      '',
    ].join('\n');
    return { line: this.#admit(isFinal, nowMs) ? truncate(raw, this.#maxChars) : null, isFinal, latestText };
  }

  #admit(isFinal: boolean, nowMs: number): boolean {
    if (isFinal) return true;
    this.#shown = this.#shown.filter((t) => nowMs - t < WINDOW_MS);
    const last = this.#shown.at(-1);
    if (last !== undefined && nowMs - last < NON_FINAL_GAP_MS) return false;
    if (this.#shown.length >= WINDOW_MAX) return false;
    this.#shown.push(nowMs);
    return true;
  }
}
