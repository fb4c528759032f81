/**
 * Parses one line of CLI output as JSON. Resolves undefined for blank lines and anything that is not
 * JSON (banners, warnings, progress text) — CLIs mix such noise into their JSON streams.
 */
export function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    // Not JSON after all: treated as noise, like any other non-JSON line.
    return undefined;
  }
}
