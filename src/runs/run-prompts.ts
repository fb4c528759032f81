// What `musubi run` tells each agent: a worker its subtask, the resolver its conflicts, a fix round the
// failing test. The engine (run-engine.ts) decides when; this file only words it.

/** The goal as context, each line quoted (`> `) so no line of it reads as the task itself. */
function quoted(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** The worker prompt: the goal for context, then the one subtask, with what the worktree is. */
export function workerPrompt(goal: string, phase: string, instruction: string): string {
  return [
    `You are one worker of a team working on this goal (phase: ${phase}).`,
    'You work in your own git worktree of the repository; other workers have their own. Change files',
    'only for your task below; musubi commits and merges your changes when your turn ends.',
    '',
    'Goal (for context):',
    quoted(goal),
    '',
    'Your task:',
    instruction,
  ].join('\n');
}

/**
 * The worker prompt again after a turn that changed nothing while its edits failed: the same task,
 * preceded by what the tools answered, quoted, so the agent can work around it (read the file first,
 * write it another way) instead of repeating it.
 */
export function retryPrompt(
  goal: string,
  phase: string,
  instruction: string,
  refusals: readonly string[],
): string {
  return [
    'Your last attempt at this task changed no file: these edits failed or were refused:',
    quoted(refusals.join('\n')),
    'Work around that (read a file before you write it, edit it another way) and make the change.',
    '',
    workerPrompt(goal, phase, instruction),
  ].join('\n');
}

/** The prompt of a conflict-resolution turn. */
export function resolverPrompt(goal: string, subtask: string, files: readonly string[]): string {
  return [
    `Merging the work of ${subtask} into the team's branch left conflicts in:`,
    ...files.map((f) => `- ${f}`),
    '',
    'Resolve every conflict (the <<<<<<< ======= >>>>>>> blocks) so that both changes serve the goal,',
    'and leave no conflict marker. Do not commit; musubi concludes the merge.',
    '',
    'Goal (for context):',
    quoted(goal),
  ].join('\n');
}

/** The prompt of the extra implement round after a failing test gate. */
export function fixPrompt(command: string, exitCode: number, output: string): string {
  return [
    `The test command \`${command}\` failed with exit code ${exitCode} on the team's integrated work.`,
    'Fix the code so that it passes. Its output:',
    '',
    output,
  ].join('\n');
}
