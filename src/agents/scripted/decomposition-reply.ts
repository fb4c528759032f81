/** Default number of workers when the prompt does not say "at most <N> subtasks". */
const DEFAULT_MAX_SUBTASKS = 4;

const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$/;

/** True when `prompt` asks for a three-phase decomposition (yadon style): it names `phases` and `subtasks`. */
export function isDecompositionRequest(prompt: string): boolean {
  return prompt.includes('"phases"') && prompt.includes('subtasks');
}

/**
 * The task text of a decomposition prompt: between `<task>` and `</task>`, else the paragraph after a
 * `Task:` / `タスク:` line, else the whole prompt.
 */
export function extractTask(prompt: string): string {
  const tagged = /<task>\r?\n?([\s\S]*?)\r?\n?<\/task>/.exec(prompt);
  if (tagged?.[1] !== undefined) return tagged[1].trim();
  const lines = prompt.split(/\r?\n/);
  const at = lines.findIndex((l) => /^\s*(?:task|タスク)\s*[:：]/i.test(l));
  if (at === -1) return prompt.trim();
  const first = (lines[at] ?? '').replace(/^\s*(?:task|タスク)\s*[:：]\s*/i, '');
  const rest: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() === '' && (rest.length > 0 || first !== '')) break;
    if (l.trim() !== '') rest.push(l);
  }
  return [first, ...rest]
    .filter((l) => l !== '')
    .join('\n')
    .trim();
}

function maxSubtasks(prompt: string): number {
  const n = Number(/at most\s+(\d+)\s+subtasks/i.exec(prompt)?.[1] ?? /最大\s*(\d+)/.exec(prompt)?.[1]);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_MAX_SUBTASKS;
}

/**
 * Answers a decomposition request by fixed rules: one implement subtask per bullet line of the task
 * (the whole task when it has no bullets; more bullets than N are dealt round-robin into N subtasks),
 * then one docs and one review subtask naming the task. Returns the JSON text of
 * `{"phases": [...], "strategy": "..."}`.
 */
export function decompositionReply(prompt: string): string {
  const task = extractTask(prompt);
  const n = maxSubtasks(prompt);
  const bullets = task.split(/\r?\n/).flatMap((l) => {
    const text = BULLET.exec(l)?.[1];
    return text === undefined ? [] : [text];
  });
  const groups: string[][] = [];
  bullets.forEach((b, i) => (groups[i % n] ??= []).push(b));
  const implement = bullets.length === 0 ? [task] : groups.map((g) => g.join('\n'));
  const title = task.split(/\r?\n/)[0]?.trim() ?? '';
  const reply = {
    phases: [
      { name: 'implement', subtasks: implement.map((instruction) => ({ instruction })) },
      {
        name: 'docs',
        subtasks: [
          {
            instruction: `Update the project documents related to this change (README, agent instruction files): ${title}`,
          },
        ],
      },
      {
        name: 'review',
        subtasks: [
          {
            instruction: `Review the implementation and the documents for quality and consistency and report problems: ${title}`,
          },
        ],
      },
    ],
    strategy: `scripted: ${implement.length} implement subtask(s) from ${bullets.length} bullet line(s), then docs, then review`,
  };
  return JSON.stringify(reply);
}
