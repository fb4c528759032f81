import { describe, expect, it } from 'vitest';
import { argsSummary, cutText, oneLine, toolEvent, toolKindOf, toolResultEvent } from './tool-event.js';

describe('cutText', () => {
  it('keeps a text that fits and says how many characters it cut from a longer one', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcdef', 4)).toBe('abcd… [2 more characters]');
    const long = 'x'.repeat(4096 + 12345);
    expect(cutText(long)).toBe(`${'x'.repeat(4096)}… [12345 more characters]`);
  });
});

describe('oneLine', () => {
  it('joins lines with one space and cuts past 200 characters with an ellipsis', () => {
    expect(oneLine('cat <<EOF > a.txt\r\n  hi\n\nEOF\r')).toBe('cat <<EOF > a.txt hi EOF');
    const cut = oneLine('y'.repeat(300));
    expect(cut).toHaveLength(200);
    expect(cut.endsWith('…')).toBe(true);
    expect(oneLine('z'.repeat(200))).toBe('z'.repeat(200));
  });
});

describe('toolKindOf', () => {
  it.each([
    ['Bash', 'command'],
    ['run_shell_command', 'command'],
    ['bash', 'command'],
    ['Edit', 'edit'],
    ['Write', 'edit'],
    ['MultiEdit', 'edit'],
    ['NotebookEdit', 'edit'],
    ['write_file', 'edit'],
    ['replace', 'edit'],
    ['create', 'edit'],
    ['Read', 'read'],
    ['read_file', 'read'],
    ['view', 'read'],
    ['Grep', 'search'],
    ['Glob', 'search'],
    ['LS', 'search'],
    ['search_file_content', 'search'],
    ['list_directory', 'search'],
    ['WebFetch', 'web'],
    ['WebSearch', 'web'],
    ['google_web_search', 'web'],
    ['webfetch', 'web'],
    ['web_fetch', 'web'],
    ['Task', 'other'],
    ['mcp__github__create_issue', 'other'],
    ['report_intent', 'other'],
  ] as const)('classifies %s as %s', (name, kind) => {
    expect(toolKindOf(name)).toBe(kind);
  });
});

describe('argsSummary', () => {
  it('prefers the command, then the file, then the pattern over the folder it searches', () => {
    expect(argsSummary({ description: 'list', command: 'ls -la' })).toBe('ls -la');
    expect(argsSummary({ file_path: '/w/a.ts', old_string: 'x' })).toBe('/w/a.ts');
    expect(argsSummary({ path: '/w/src', pattern: 'TODO' })).toBe('TODO');
    expect(argsSummary({ url: 'https://example.com', prompt: 'sum up' })).toBe('https://example.com');
    expect(argsSummary({ command: ['bash', '-lc', 'ls'] })).toBe('bash -lc ls');
    expect(argsSummary({ other: 1 })).toBeUndefined();
    expect(argsSummary('text')).toBeUndefined();
  });
});

describe('toolEvent', () => {
  it('builds a tool event with the kind, a one-line summary and the arguments as JSON', () => {
    expect(toolEvent({ name: 'Bash', args: { command: 'npm test\n  -- --run' }, callId: 'toolu_1' })).toEqual(
      {
        type: 'tool',
        callId: 'toolu_1',
        name: 'Bash',
        kind: 'command',
        summary: 'npm test -- --run',
        input: '{"command":"npm test\\n  -- --run"}',
      },
    );
  });

  it('cuts the input at 4 KiB, takes the name as summary when no argument tells more, and omits a missing callId', () => {
    const event = toolEvent({ name: 'Task', args: { content: 'c'.repeat(5000) } });
    expect(event).not.toHaveProperty('callId');
    expect(event.summary).toBe('Task');
    expect(event.input).toMatch(/^\{"content":"c+… \[918 more characters\]$/);
    expect(event.input.startsWith(`{"content":"${'c'.repeat(4096 - 12)}…`)).toBe(true);
  });

  it('keeps arguments that arrive as a JSON string as they are, and an explicit kind and summary', () => {
    expect(toolEvent({ name: 'x.y', args: '{"a":1}', kind: 'other', summary: 'custom' })).toMatchObject({
      kind: 'other',
      summary: 'custom',
      input: '{"a":1}',
    });
  });
});

describe('toolResultEvent', () => {
  it('cuts the output at 4 KiB and says how much it cut', () => {
    expect(toolResultEvent({ output: 'o'.repeat(4100), isError: true, callId: 'c' })).toEqual({
      type: 'tool_result',
      callId: 'c',
      isError: true,
      output: `${'o'.repeat(4096)}… [4 more characters]`,
    });
    expect(toolResultEvent({ output: 'ok', isError: false })).toEqual({
      type: 'tool_result',
      isError: false,
      output: 'ok',
    });
  });
});
