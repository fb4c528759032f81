import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../core/shell-quote.js';
import { chooseReadBeforeWrite, chooseShellCall, chooseWriteCall } from './tool-choice.js';

const file = { path: 'out/a.txt', absolute: '/w/out/a.txt', content: "it's\n" };
const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('tool choice', () => {
  it('writes with the write tool each CLI offers, by name and schema', () => {
    const claude = [
      { name: 'Write', kind: 'function' as const, schema: obj({ file_path: {}, content: {} }) },
    ];
    expect(chooseWriteCall(claude, file)).toEqual({
      name: 'Write',
      input: { file_path: '/w/out/a.txt', content: "it's\n" },
    });
    const opencode = [
      { name: 'write', kind: 'function' as const, schema: obj({ filePath: {}, content: {} }) },
    ];
    expect(chooseWriteCall(opencode, file)?.input).toEqual({ filePath: '/w/out/a.txt', content: "it's\n" });
    const copilot = [{ name: 'create', kind: 'function' as const, schema: obj({ path: {}, file_text: {} }) }];
    expect(chooseWriteCall(copilot, file)?.input).toEqual({ path: '/w/out/a.txt', file_text: "it's\n" });
  });

  it('falls back to a free-form apply_patch, then to a shell tool', () => {
    const codex = [{ name: 'apply_patch', kind: 'custom' as const }];
    expect(chooseWriteCall(codex, file)?.freeform).toBe(
      "*** Begin Patch\n*** Add File: out/a.txt\n+it's\n*** End Patch\n",
    );
    const shellOnly = [
      { name: 'shell', kind: 'function' as const, schema: obj({ command: { type: 'array' } }) },
    ];
    const call = chooseWriteCall(shellOnly, file);
    expect(call?.name).toBe('shell');
    expect(call?.input['command']).toEqual([
      'bash',
      '-lc',
      `sh -c 'printf %s "$1" > "$2"' sh 'it'\\''s\n' out/a.txt`,
    ]);
    expect(
      chooseWriteCall([{ name: 'Read', kind: 'function', schema: obj({ file_path: {} }) }], file),
    ).toBeUndefined();
  });

  it('runs a command line through a string-command shell tool with its description filled in', () => {
    const bash = [
      {
        name: 'Bash',
        kind: 'function' as const,
        schema: obj({ command: { type: 'string' }, description: {} }),
      },
    ];
    expect(chooseShellCall(bash, ['echo', 'a b'])).toEqual({
      name: 'Bash',
      input: { command: "echo 'a b'", description: 'musubi scripted step' },
    });
    expect(shellQuote('plain-word_1.txt')).toBe('plain-word_1.txt');
    expect(shellQuote('')).toBe("''");
  });

  it('reads before a write only for a write tool that demands it (claude Write), with its path', () => {
    const read = { name: 'Read', kind: 'function' as const, schema: obj({ file_path: {}, offset: {} }) };
    const write = { name: 'Write', input: { file_path: '/w/a.txt', content: 'x' } };
    expect(chooseReadBeforeWrite([read], write)).toEqual({ name: 'Read', input: { file_path: '/w/a.txt' } });
    expect(chooseReadBeforeWrite([], write)).toBeUndefined();
    const opencodeWrite = { name: 'write', input: { filePath: '/w/a.txt', content: 'x' } };
    expect(chooseReadBeforeWrite([read], opencodeWrite)).toBeUndefined();
  });
});
