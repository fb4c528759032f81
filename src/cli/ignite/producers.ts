import { mkdir } from 'node:fs/promises';
import { MusubiError } from '../../core/errors.js';
import { isSendRecipient, normaliseWorkerName } from '../../gateways/ignite/agent-names.js';
import type { IgnitePaths } from '../../gateways/ignite/ignite-paths.js';
import { buildMime, type MimeBuildInput } from '../../gateways/ignite/mime/mime-build.js';
import { formatIsoLocal } from '../../gateways/ignite/mime/mime-time.js';
import { writeNewQueueFile } from '../../gateways/ignite/mime/queue-file-writer.js';

const quote = (value: string): string =>
  `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replace(/\r?\n/g, '\\n')}"`;
const block = (value: string): string =>
  `|\n${value
    .replace(/\r\n?/g, '\n')
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`;

function envelopeBody(
  type: string,
  to: string,
  priority: string,
  nowMs: number,
  payload: readonly string[],
): string {
  return (
    [
      `type: ${type}`,
      'from: user',
      `to: ${to}`,
      `timestamp: ${quote(formatIsoLocal(nowMs))}`,
      `priority: ${priority}`,
      'payload:',
      ...payload.map((l) => `  ${l}`),
    ].join('\n') + '\n'
  );
}

async function write(
  paths: IgnitePaths,
  input: MimeBuildInput & { readonly to: readonly [string] },
): Promise<string> {
  const dir = paths.agentRoot(input.to[0]);
  await mkdir(dir, { recursive: true });
  const nowMs = performance.timeOrigin + performance.now();
  return writeNewQueueFile({
    dir,
    type: input.type,
    content: buildMime(input, { nowMs, pid: process.pid }),
    nowMs,
  });
}

/** `ignite plan "<goal>" [-c context]`: a high-priority `user_goal` for the leader (spec 6.4). */
export function writePlan(paths: IgnitePaths, goal: string, context = ''): Promise<string> {
  const payload = [`goal: ${block(goal)}`.replaceAll('\n', '\n  '), `context: ${quote(context)}`];
  return write(paths, {
    from: 'user',
    to: ['leader'],
    type: 'user_goal',
    priority: 'high',
    body: envelopeBody('user_goal', 'leader', 'high', Date.now(), payload),
  });
}

/** `ignite notify <target> "<msg>"`: a `notification` (body `message: |`); `ignitian-N` becomes `ignitian_N`. */
export function writeNotification(paths: IgnitePaths, target: string, message: string): Promise<string> {
  const to = normaliseWorkerName(target);
  if (!isSendRecipient(to))
    throw new MusubiError(
      'USAGE_INVALID',
      `invalid target agent '${target}' (leader, strategist, architect, evaluator, coordinator, innovator, ignitian_N)`,
    );
  return write(paths, { from: 'user', to: [to], type: 'notification', body: `message: ${block(message)}\n` });
}

/**
 * `ignite work-on <issue|url> [-r owner/repo]`: a high-priority `github_task` for the leader with
 * X-IGNITE-Repository and X-IGNITE-Issue. A GitHub issue URL supplies both; a number needs `-r`.
 */
export function writeWorkOn(paths: IgnitePaths, issueOrUrl: string, repo?: string): Promise<string> {
  const url = /^https?:\/\/github\.com\/([^/\s]+\/[^/\s]+)\/(?:issues|pull)\/(\d+)/.exec(issueOrUrl);
  const repository = url?.[1] ?? repo;
  const issue = url?.[2] ?? /^#?(\d+)$/.exec(issueOrUrl)?.[1] ?? '';
  if (issue === '')
    throw new MusubiError(
      'USAGE_INVALID',
      `expected an issue number or a GitHub issue URL, got '${issueOrUrl}'`,
    );
  if (repository === undefined || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
    throw new MusubiError('USAGE_INVALID', 'work-on needs the repository: -r owner/repo or an issue URL');
  }
  const payload = [
    `repository: ${quote(repository)}`,
    `issue_number: ${issue}`,
    ...(url === null ? [] : [`url: ${quote(issueOrUrl)}`]),
  ];
  return write(paths, {
    from: 'user',
    to: ['leader'],
    type: 'github_task',
    priority: 'high',
    repository,
    issue,
    body: envelopeBody('github_task', 'leader', 'high', Date.now(), payload),
  });
}
