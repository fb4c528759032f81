import { mkdir } from 'node:fs/promises';
import { MusubiError } from '../../core/errors.js';
import { isSendRecipient, normaliseWorkerName } from '../../gateways/ignite/agent-names.js';
import type { IgnitePaths } from '../../gateways/ignite/ignite-paths.js';
import { buildMime, type MimeBuildInput } from '../../gateways/ignite/mime/mime-build.js';
import { writeNewQueueFile } from '../../gateways/ignite/mime/queue-file-writer.js';

/**
 * A double-quoted scalar as the original writes it: a backslash before every `"`. A backslash is doubled
 * too (the original left it, so `C:\temp` came back with a tab and `\q` did not parse).
 */
const quoted = (value: string): string => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * A literal block scalar laid out as the original's `notify` does (`printf '%s' | sed 's/^/  /'`): every
 * line, empty ones too, indented by two spaces, a final line break dropped, nothing after the last line.
 * CR and CRLF become LF first (YAML breaks lines at a CR, so the rest would fall out of the block); a block
 * whose first line starts with a space gets the indentation indicator `2`, without which YAML would take
 * that space for indentation.
 */
function literalBlock(value: string): string {
  const lines = value.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  // YAML takes the indentation from the first line holding more than spaces; lines before it may not be longer.
  const first = lines.findIndex((l) => /[^ ]/.test(l));
  const isIndicated = lines.slice(0, first === -1 ? undefined : first + 1).some((l) => l.startsWith(' '));
  return `|${isIndicated ? '2' : ''}\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

/** `key: "…"` for one line, `key: |` with the text below it when the value has line breaks. */
const field = (key: string, value: string): string =>
  `${key}: ${/[\r\n]/.test(value) ? literalBlock(value) : quoted(value)}`;

function requireText(value: string, what: string): void {
  if (value === '') throw new MusubiError('USAGE_INVALID', `${what} must not be empty`);
}

/** Writes `queue/<to>/<prefix>_<usec>.mime` (spec 2.2; the prefix is the type except `notify`). */
async function write(
  paths: IgnitePaths,
  input: MimeBuildInput & { readonly to: readonly [string] },
  prefix = input.type,
): Promise<string> {
  const dir = paths.agentRoot(input.to[0]);
  await mkdir(dir, { recursive: true });
  const nowMs = performance.timeOrigin + performance.now();
  return writeNewQueueFile({
    dir,
    type: prefix,
    content: buildMime(input, { nowMs, pid: process.pid }),
    nowMs,
  });
}

/**
 * `ignite plan "<goal>" [-c context]`: a high-priority `user_goal` for the leader (spec 6.4) with the
 * original's flat body: `goal: "…"`, then `context: "…"` when a context is given, no trailing newline. A
 * goal or context with line breaks is a `|` block instead (the original's quoted line folded them into
 * spaces). USAGE_INVALID for an empty goal.
 */
export async function writePlan(paths: IgnitePaths, goal: string, context = ''): Promise<string> {
  requireText(goal, 'the goal');
  const body = [field('goal', goal), ...(context === '' ? [] : [field('context', context)])].join('\n');
  return write(paths, { from: 'user', to: ['leader'], type: 'user_goal', priority: 'high', body });
}

/**
 * `ignite notify <target> "<msg>"`: a `notification` with the original's body `message: |` and the text
 * below it, no trailing newline; `ignitian-N` becomes `ignitian_N`. USAGE_INVALID for an unknown target
 * or an empty message.
 */
export async function writeNotification(
  paths: IgnitePaths,
  target: string,
  message: string,
): Promise<string> {
  const to = normaliseWorkerName(target);
  if (!isSendRecipient(to))
    throw new MusubiError(
      'USAGE_INVALID',
      `invalid target agent '${target}' (leader, strategist, architect, evaluator, coordinator, innovator, ignitian_N)`,
    );
  requireText(message, 'the message');
  const body = `message: ${literalBlock(message)}`;
  return write(paths, { from: 'user', to: [to], type: 'notification', body }, 'notify');
}

/**
 * `ignite work-on <issue|url> [-r owner/repo]`: a high-priority `github_task` for the leader with
 * X-IGNITE-Repository and X-IGNITE-Issue. A GitHub issue URL supplies both; a number needs `-r`. The body
 * is the original's, less `issue_title` and `issue_body`, which it fetched from GitHub (musubi does not
 * call GitHub; the leader reads the issue at `url`).
 */
export async function writeWorkOn(paths: IgnitePaths, issueOrUrl: string, repo?: string): Promise<string> {
  const url = /^https?:\/\/github\.com\/([^/\s]+\/[^/\s]+)\/(issues|pull)\/(\d+)/.exec(issueOrUrl);
  const repository = url?.[1] ?? repo;
  const issue = url?.[3] ?? /^#?(\d+)$/.exec(issueOrUrl)?.[1] ?? '';
  if (issue === '')
    throw new MusubiError(
      'USAGE_INVALID',
      `expected an issue number or a GitHub issue URL, got '${issueOrUrl}'`,
    );
  if (repository === undefined || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
    throw new MusubiError('USAGE_INVALID', 'work-on needs the repository: -r owner/repo or an issue URL');
  }
  const body = [
    'trigger: auto',
    `repository: ${repository}`,
    `issue_number: ${issue}`,
    'requested_by: user',
    'trigger_comment: "work-onコマンドによる手動トリガー"',
    'branch_prefix: "ignite/"',
    // The issue's html_url, as GitHub would have answered it.
    `url: ${quoted(`https://github.com/${repository}/${url?.[2] ?? 'issues'}/${issue}`)}`,
  ].join('\n');
  return write(paths, {
    from: 'user',
    to: ['leader'],
    type: 'github_task',
    priority: 'high',
    repository,
    issue,
    body,
  });
}
