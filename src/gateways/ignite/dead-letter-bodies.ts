/** Why the last attempt of a dead-lettered message failed (spec/ignite.md 3.5). */
export type FailureKind = 'timeout' | 'failed';

/** The `<reason>` text of dead-letter entries and escalations. */
export function failureReason(kind: FailureKind, maxRetries: number): string {
  return kind === 'timeout'
    ? `timeout after ${maxRetries} retries`
    : `delivery failed after ${maxRetries} retries`;
}

/** Escapes `\` and `"` for a double-quoted YAML value. */
export function quoteYaml(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** `original` indented by two spaces per line (empty lines too), trailing line feeds removed. */
function indentOriginal(original: string): string {
  const lines = original.split('\n');
  if (original.endsWith('\n')) lines.pop();
  return lines
    .map((l) => `  ${l}`)
    .join('\n')
    .replace(/\n+$/, '');
}

/** Inputs of {@link deadLetterBody}. */
export interface DeadLetterBodyInput {
  readonly originalFile: string;
  readonly retryCount: number;
  readonly maxRetries: number;
  readonly reason: string;
  readonly movedAt: string;
  /** The claimed file's content as on disk (with the headers the monitor added). */
  readonly original: string;
}

/** The body of a dead-letter entry (fixture F9), without a trailing newline. */
export function deadLetterBody(input: DeadLetterBodyInput): string {
  return [
    `original_file: ${quoteYaml(input.originalFile)}`,
    'failure_info:',
    `  retry_count: ${input.retryCount}`,
    `  max_retries: ${input.maxRetries}`,
    `  last_error: ${quoteYaml(input.reason)}`,
    `  moved_at: ${quoteYaml(input.movedAt)}`,
    'original_message: |',
    indentOriginal(input.original),
  ].join('\n');
}

/** Inputs of {@link escalationBody}; empty fields are written as `unknown`. */
export interface EscalationBodyInput {
  readonly taskId: string;
  readonly title: string;
  readonly originalAssignee: string;
  readonly reason: string;
  readonly retryCount: number;
  readonly maxRetries: number;
  /** `<rt>/queue/dead_letter/` with the trailing slash. */
  readonly dlqPath: string;
}

/** The body of an escalation to the leader (fixture F10 shape, deviation 9), without a trailing newline. */
export function escalationBody(input: EscalationBodyInput): string {
  const orUnknown = (v: string): string => quoteYaml(v === '' ? 'unknown' : v);
  return [
    `task_id: ${orUnknown(input.taskId)}`,
    `title: ${orUnknown(input.title)}`,
    `original_assignee: ${orUnknown(input.originalAssignee)}`,
    `failure_reason: ${quoteYaml(input.reason)}`,
    `retry_count: ${input.retryCount}`,
    `max_retries: ${input.maxRetries}`,
    'recommended_action: "manual_review"',
    `dlq_path: ${quoteYaml(input.dlqPath)}`,
    'notes: "リトライ上限に到達したためエスカレーションします"',
  ].join('\n');
}
