const MAX_LINES = 4;
const MAX_CHARS = 1000;
/** Lines that say what went wrong, in the words agent CLIs use; warnings and progress noise are not. */
const RELEVANT =
  /\b(error|failed|failure|fatal|denied|unauthori[sz]ed|forbidden|invalid|not logged in|cannot|can't|refus|unable|missing|not found|exceeded|quota|rate limit)\b/i;
const NOISE = /^\s*(warn(ing)?\b|\[warn|deprecat|debug\b|info\b|\(node:\d+\))/i;

/**
 * The lines of a failed CLI's stderr that explain the failure: the last few lines that name an error
 * (skipping warnings and deprecation notices), else the last non-empty lines. At most 4 lines and
 * 1,000 characters; '' when stderr was empty.
 */
export function summarizeStderr(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const relevant = lines.filter((l) => RELEVANT.test(l) && !NOISE.test(l));
  const picked = (relevant.length > 0 ? relevant : lines.filter((l) => !NOISE.test(l))).slice(-MAX_LINES);
  const text = (picked.length > 0 ? picked : lines.slice(-MAX_LINES)).join('\n');
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text;
}
