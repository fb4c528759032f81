import { describe, expect, it } from 'vitest';
import { planFromOutput } from './plan-extraction.js';

const plan = '{"phases": [{"name": "implement", "subtasks": [{"instruction": "a"}]}], "strategy": "s"}';
const implementA = [{ name: 'implement', subtasks: [{ instruction: 'a' }] }];
const fallback = (instruction: string) => [{ name: 'implement', subtasks: [{ instruction }] }];

describe('decomposition plan extraction', () => {
  it('parses fenced ```json, plain-fenced and prose-wrapped answers', () => {
    expect(planFromOutput(`Here:\n\`\`\`json\n${plan}\n\`\`\`\nbye`, 'x').phases).toEqual(implementA);
    expect(planFromOutput(`\`\`\`\n${plan}\n\`\`\``, 'x').phases).toEqual(implementA);
    expect(planFromOutput(`I think ${plan} is best.`, 'x')).toMatchObject({
      phases: implementA,
      strategy: 's',
    });
    expect(planFromOutput(`  ${plan}\n`, 'x').fallbackReason).toBeUndefined();
  });

  it('keeps the text unchanged for an unclosed fence and still finds the braces', () => {
    expect(planFromOutput(`\`\`\`json\n${plan}`, 'x').phases).toEqual(implementA);
  });

  it('falls back to one implement subtask with the original instruction on two objects', () => {
    const out = planFromOutput('{"a":1} and {"b":2}', 'orig');
    expect(out.phases).toEqual(fallback('orig'));
    expect(out.fallbackReason).toBeDefined();
  });

  it('falls back for a bad fenced block followed by a good object', () => {
    expect(planFromOutput(`\`\`\`json\n{bad\n\`\`\`\n${plan}`, 'orig').phases).toEqual(fallback('orig'));
  });

  it('falls back for phases [], a missing phases, non-object phases, non-array subtasks and a non-object root', () => {
    for (const out of [
      '{"phases": []}',
      '{"strategy": "x"}',
      '{"phases": ["x"]}',
      '{"phases": [{"name": "a", "subtasks": "b"}]}',
      '{"phases": [{"name": "a", "subtasks": null}]}',
      '[1, 2]',
      'no json at all',
    ]) {
      expect(planFromOutput(out, 'orig').phases).toEqual(fallback('orig'));
    }
  });

  it('names a phase without name phase<i> and gives a phase without subtasks none', () => {
    const out = planFromOutput(
      '{"phases": [{"subtasks": []}, {"name": "docs"}, {"name": 3, "subtasks": [1]}]}',
      'x',
    );
    expect(out.phases).toEqual([
      { name: 'phase0', subtasks: [] },
      { name: 'docs', subtasks: [] },
      { name: '3', subtasks: [1] },
    ]);
  });
});
