import { isMap, isScalar, parseDocument } from 'yaml';

/** One message the scripted agent sends in reply: type, recipient and YAML body. */
export interface OrgReply {
  readonly type: string;
  readonly to: string;
  readonly body: string;
}

/** The message a rule reacts to: its type, sender, recipient (the agent itself) and body fields. */
export interface OrgMessage {
  readonly type: string;
  readonly from: string;
  readonly self: string;
  field(key: string): string;
}

/** What a rule returns: replies to send and, for a worker, instructions to run before replying. */
export interface OrgTurn {
  readonly work: string;
  readonly replies: readonly OrgReply[];
}

const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$/;

const quote = (value: string): string => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
const block = (value: string): string =>
  `|\n${(value.replace(/\n+$/, '') || '-')
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`;

/** The tasks of a goal: one per bullet line, or the whole text when it has none. */
export function tasksOf(text: string): string[] {
  const bullets = text.split('\n').flatMap((l) => {
    const match = BULLET.exec(l)?.[1];
    return match === undefined ? [] : [match];
  });
  return bullets.length > 0 ? bullets : text.trim() === '' ? [] : [text.trim()];
}

/** Reads body field `key` (flat or under `payload:`), as the IGNITE monitor does; '' when absent. */
export function bodyField(body: string, key: string): string {
  try {
    const doc = parseDocument(body);
    if (doc.errors.length === 0 && isMap(doc.contents)) {
      const payload = doc.get('payload', true);
      const node = isMap(payload) && payload.has(key) ? payload.get(key, true) : doc.get(key, true);
      return isScalar(node) && node.value !== null ? String(node.value) : '';
    }
  } catch {
    // Not YAML: fall through to the line rule below.
  }
  return (new RegExp(`^\\s*${key}:(.*)$`, 'm').exec(body)?.[1] ?? '').trim().replaceAll('"', '');
}

function coordinatorTurn(m: OrgMessage, workers: number): OrgTurn {
  if (m.type === 'task_list') {
    const tasks = tasksOf(m.field('tasks'));
    const replies: OrgReply[] = tasks.map((task, i) => ({
      type: 'task_assignment',
      to: `ignitian_${(i % Math.max(1, workers)) + 1}`,
      body: [
        `task_id: ${quote(`task_${String(i + 1).padStart(3, '0')}`)}`,
        `title: ${quote(task.slice(0, 60))}`,
        `description: ${block(task)}`,
      ].join('\n'),
    }));
    // Known counts only (a later turn does not know the total): none completed yet, all assigned.
    const progress = `stage: assigned\npercent: 0\nsummary: ${quote(`${tasks.length} task(s) assigned`)}\ncompleted: 0\ntotal_tasks: ${tasks.length}`;
    return { work: '', replies: [...replies, { type: 'progress_update', to: 'leader', body: progress }] };
  }
  if (m.type === 'task_completed') {
    const id = m.field('task_id');
    const request = `task_id: ${quote(id)}\ntitle: ${quote(m.field('title'))}\nresult: ${quote(m.field('result'))}`;
    const progress = `stage: completed\nsummary: ${quote(`${id} completed by ${m.from}`)}`;
    return {
      work: '',
      replies: [
        { type: 'evaluation_request', to: 'evaluator', body: request },
        { type: 'progress_update', to: 'leader', body: progress },
      ],
    };
  }
  return { work: '', replies: [] };
}

/**
 * The scripted agent's fixed rules for IGNITE's role organisation (the flow user_goal -> strategy ->
 * task_list -> task_assignment -> task_completed -> evaluation_result). `workers` is the number of
 * `ignitian_N` queues. Any `<x>_request` not covered below is answered with `<x>_response` to its sender.
 */
export function orgTurn(m: OrgMessage, workers: number): OrgTurn {
  const role = /^ignitian[-_]\d+$/.test(m.self) ? 'ignitian' : m.self;
  const goal = m.field('goal');
  switch (`${role}:${m.type}`) {
    case 'leader:user_goal':
      return {
        work: '',
        replies: [
          {
            type: 'strategy_request',
            to: 'strategist',
            body: `goal: ${block(goal)}\ncontext: ${quote(m.field('context'))}`,
          },
        ],
      };
    case 'strategist:strategy_request': {
      const tasks = tasksOf(goal)
        .map((t) => `- ${t}`)
        .join('\n');
      return {
        work: '',
        replies: [
          { type: 'strategy_response', to: 'leader', body: `goal: ${block(goal)}\ntasks: ${block(tasks)}` },
        ],
      };
    }
    case 'leader:strategy_response':
      return {
        work: '',
        replies: [
          {
            type: 'task_list',
            to: 'coordinator',
            body: `goal: ${block(goal)}\ntasks: ${block(m.field('tasks'))}`,
          },
        ],
      };
    case 'coordinator:task_list':
    case 'coordinator:task_completed':
      return coordinatorTurn(m, workers);
    case 'ignitian:task_assignment': {
      const body = `task_id: ${quote(m.field('task_id'))}\ntitle: ${quote(m.field('title'))}\nresult: "done"`;
      return { work: m.field('description'), replies: [{ type: 'task_completed', to: 'coordinator', body }] };
    }
    case 'evaluator:evaluation_request': {
      const body = `task_id: ${quote(m.field('task_id'))}\ntitle: ${quote(m.field('title'))}\nverdict: "pass"\nscore: 100`;
      return { work: '', replies: [{ type: 'evaluation_result', to: 'leader', body }] };
    }
  }
  if (m.type.endsWith('_request') && m.from !== '') {
    return {
      work: '',
      replies: [{ type: m.type.replace(/_request$/, '_response'), to: m.from, body: 'status: "ok"' }],
    };
  }
  return { work: '', replies: [] };
}
