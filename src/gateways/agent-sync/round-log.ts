import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.js';

/** The round log folder, relative to the server's working directory (as replies show it). */
export const ROUND_LOG_DIR = 'logs/v6';

/** `2026-11-29T18:02:08+00:00`: UTC, whole seconds, explicit offset. */
function utcSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
}

/**
 * Appends sections to `logs/v6/round_<N>.md` under `cwd` (folders created on demand). Files are only
 * ever appended to, never deleted. I/O errors reject with the OS error.
 */
export class RoundLog {
  readonly #cwd: string;
  readonly #clock: Clock;

  constructor(options: { readonly cwd: string; readonly clock: Clock }) {
    this.#cwd = options.cwd;
    this.#clock = options.clock;
  }

  /** The path a round's log has in replies: `logs/v6/round_<N>.md`. */
  relativePath(round: number): string {
    return `${ROUND_LOG_DIR}/round_${round}.md`;
  }

  /** Appends `\n## <section> / <agent> — <UTC time>\n\n<text>\n`; resolves the relative path. */
  async append(entry: { round: number; section: string; agent: string; text: string }): Promise<string> {
    await mkdir(join(this.#cwd, ROUND_LOG_DIR), { recursive: true });
    const relative = this.relativePath(entry.round);
    const header = `## ${entry.section} / ${entry.agent} \u2014 ${utcSeconds(this.#clock.now())}`;
    await appendFile(join(this.#cwd, relative), `\n${header}\n\n${entry.text}\n`, 'utf8');
    return relative;
  }
}
