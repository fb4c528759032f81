import type { AgentRunResult } from './agent-runner.js';

/**
 * Why a failed turn failed, in one short text for error messages: the CLI's own error
 * (`errorMessage`: the API error, an auth problem), else the last stderr line, else the start of its
 * text; '' when there is nothing to say.
 */
export function turnFailureReason(
  result: Pick<AgentRunResult, 'errorMessage' | 'stderrTail' | 'text'>,
): string {
  if (result.errorMessage !== undefined && result.errorMessage !== '') return result.errorMessage;
  const stderr = result.stderrTail.trim().split('\n').at(-1)?.trim() ?? '';
  return stderr !== '' ? stderr : result.text.trim().slice(0, 200);
}
