// Pure formatting for the page: no DOM, so it is also tested under Node.

/** "just now", "12 s ago", "3 min ago", "2 h ago", "4 d ago". */
export function formatAgo(atMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - atMs) / 1000));
  if (s < 3) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** A duration: "45 s", "3 min 05 s", "2 h 10 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Local wall-clock time, 24 h: "09:03:07". */
export function formatClock(atMs: number): string {
  const d = new Date(atMs);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function formatCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** Dollars with cents, or four decimals below one cent: "$1.25", "$0.0042", "$0". */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** A stable hue (0-359) for a name, so an agent keeps its colour across reloads. */
export function hueOf(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + (ch.codePointAt(0) ?? 0)) % 3600;
  return Math.floor(h / 10);
}

/** The first letter of a name for an avatar, upper-cased; works for any script. */
export function initialOf(name: string): string {
  const first = Array.from(name.replace(/^[^\p{L}\p{N}]+/u, ''))[0] ?? '?';
  return first.toUpperCase();
}

/** Text cut to `max` code points with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** The first non-blank line of `text`, cut to `max` code points; `isCut` when anything was left out. */
export function summaryLine(text: string, max: number): { readonly line: string; readonly isCut: boolean } {
  const trimmed = text.trim();
  const first = trimmed.split('\n', 1)[0]?.trim() ?? '';
  const line = clip(first, max);
  return { line, isCut: line !== trimmed };
}

/** Input plus output tokens, for a glance: "12.3k tok". */
export function formatTokens(usage: { readonly inputTokens: number; readonly outputTokens: number }): string {
  return `${formatCount(usage.inputTokens + usage.outputTokens)} tok`;
}
