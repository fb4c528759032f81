import { describe, expect, it } from 'vitest';
import { bodyField, orgTurn } from './ignite-org-rules.js';

const message = (type: string, self: string, body: string) => ({
  type,
  from: 'user',
  self,
  field: (k: string) => bodyField(body, k),
});

describe('scripted IGNITE org rules', () => {
  it('reads a body field from the flat layout, the payload layout and a body that is not YAML', () => {
    expect(bodyField('goal: "say \\"hi\\""\ncontext: "c"', 'goal')).toBe('say "hi"');
    expect(bodyField('goal: |\n  a\n  b\ncontext: "c"', 'goal')).toBe('a\nb\n');
    expect(bodyField('type: user_goal\npayload:\n  goal: "g"\n  context: "c"\n', 'goal')).toBe('g');
    expect(bodyField('goal: "top"\npayload:\n  other: 1\n', 'goal')).toBe('top');
    expect(bodyField('goal: "x\n: ][', 'goal')).toBe('x');
    expect(bodyField('goal: "g"', 'context')).toBe('');
  });

  it('has the leader turn a flat user_goal into a strategy_request with goal and context', () => {
    const turn = orgTurn(message('user_goal', 'leader', 'goal: |\n  - a\n  - b\ncontext: "ctx"'), 2);
    expect(turn.replies).toEqual([
      { type: 'strategy_request', to: 'strategist', body: 'goal: |\n  - a\n  - b\ncontext: "ctx"' },
    ]);
    const noContext = orgTurn(message('user_goal', 'leader', 'goal: "one"'), 2);
    expect(noContext.replies[0]?.body).toBe('goal: |\n  one\ncontext: ""');
  });

  it('reports the task counts it knows when the coordinator assigns a task list', () => {
    const turn = orgTurn(message('task_list', 'coordinator', 'tasks: |\n  - a\n  - b'), 2);
    const progress = turn.replies.find((r) => r.type === 'progress_update');
    expect(bodyField(progress?.body ?? '', 'total_tasks')).toBe('2');
    expect(bodyField(progress?.body ?? '', 'completed')).toBe('0');
  });
});
