import { MusubiError } from '../../../core/errors.js';
import { hasLineBreak } from './header-text.js';
import { createMessageId } from './message-id.js';
import { formatRfc2822 } from './mime-time.js';

/** What `build` writes: every header value as given (validated against line breaks), and the body. */
export interface MimeBuildInput {
  readonly from: string;
  readonly to: readonly string[];
  readonly type: string;
  readonly cc?: readonly string[];
  /** Default `normal`; an empty string writes `X-IGNITE-Priority: ` as the original does. */
  readonly priority?: string;
  readonly threadId?: string;
  /** Written verbatim (no angle brackets added). */
  readonly inReplyTo?: string;
  readonly repository?: string;
  readonly issue?: string;
  readonly status?: string;
  /** Copied verbatim; the caller has already turned CRLF/CR into LF where the spec asks for it. */
  readonly body?: string;
}

/** Time and process identity of the writer (injected so tests and the monitor control them). */
export interface MimeWriterIdentity {
  readonly nowMs: number;
  readonly pid: number;
}

/** The option names `build` reports in its errors, per input field. */
export const BUILD_OPTION_NAMES = {
  from: '--from',
  to: '--to',
  cc: '--cc',
  type: '--type',
  priority: '--priority',
  threadId: '--thread-id',
  inReplyTo: '--in-reply-to',
  repository: '--repo',
  issue: '--issue',
  status: '--status',
} as const;

/**
 * Throws GATEWAY_FRAME_INVALID (details.option) when `value` holds a line-break character or NUL, so no
 * header can be injected through it (spec 2.3, deviation 1).
 */
export function assertHeaderValue(value: string, option: string): string {
  if (hasLineBreak(value)) {
    throw new MusubiError('GATEWAY_FRAME_INVALID', `argument ${option}: value must not contain line breaks`, {
      details: { option },
    });
  }
  return value;
}

function checkAll(input: MimeBuildInput): void {
  const n = BUILD_OPTION_NAMES;
  assertHeaderValue(input.from, n.from);
  for (const to of input.to) assertHeaderValue(to, n.to);
  for (const cc of input.cc ?? []) assertHeaderValue(cc, n.cc);
  assertHeaderValue(input.type, n.type);
  const optional: ReadonlyArray<[string | undefined, string]> = [
    [input.priority, n.priority],
    [input.threadId, n.threadId],
    [input.inReplyTo, n.inReplyTo],
    [input.repository, n.repository],
    [input.issue, n.issue],
    [input.status, n.status],
  ];
  for (const [value, option] of optional) if (value !== undefined) assertHeaderValue(value, option);
}

/**
 * Builds an IGNITE message (spec/ignite.md 2.3): the fixed header order, optional lines omitted when
 * absent or empty, LF line ends, no folding, raw UTF-8, then an empty line and the body verbatim with
 * nothing appended. Throws GATEWAY_FRAME_INVALID when a header value holds a line break.
 */
export function buildMime(input: MimeBuildInput, writer: MimeWriterIdentity): string {
  checkAll(input);
  const lines = [
    'MIME-Version: 1.0',
    `Message-ID: ${createMessageId(writer.nowMs, writer.pid)}`,
    `From: ${input.from}`,
    `To: ${input.to.join(', ')}`,
  ];
  const optional = (name: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') lines.push(`${name}: ${value}`);
  };
  if (input.cc !== undefined && input.cc.length > 0) lines.push(`Cc: ${input.cc.join(', ')}`);
  lines.push(`Date: ${formatRfc2822(writer.nowMs)}`);
  lines.push(`X-IGNITE-Type: ${input.type}`);
  lines.push(`X-IGNITE-Priority: ${input.priority ?? 'normal'}`);
  optional('X-IGNITE-Thread-ID', input.threadId);
  optional('In-Reply-To', input.inReplyTo);
  optional('X-IGNITE-Repository', input.repository);
  optional('X-IGNITE-Issue', input.issue);
  optional('X-IGNITE-Status', input.status);
  lines.push('Content-Type: text/x-yaml; charset=utf-8', 'Content-Transfer-Encoding: 8bit');
  return `${lines.join('\n')}\n\n${input.body ?? ''}`;
}
