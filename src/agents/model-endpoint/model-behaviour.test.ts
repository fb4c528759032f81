import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { loadEndpointScript } from './endpoint-script-file.js';
import { behaviourFor, DEFAULT_SCRIPT, directiveOf } from './model-behaviour.js';

describe('model behaviour', () => {
  it('reads a directive line anywhere in the prompt', () => {
    const prompt = 'Please do it.\nMUSUBI-MODEL: {"write": {"path": "a.txt", "content": "hi\\n"}}\nthanks';
    expect(directiveOf(prompt)).toEqual({ kind: 'write', path: 'a.txt', content: 'hi\n', then: 'Done.' });
    expect(directiveOf('MUSUBI-MODEL: "hang"')).toEqual({ kind: 'hang' });
    expect(directiveOf('MUSUBI-MODEL: {"flaky": {}}')).toEqual({
      kind: 'flaky',
      status: 503,
      then: { kind: 'auto' },
    });
    expect(directiveOf('no directive here')).toBeUndefined();
  });

  it('answers a malformed directive with a visible 400 error instead of ignoring it', () => {
    expect(directiveOf('MUSUBI-MODEL: {reply: hi}')).toMatchObject({ kind: 'error', status: 400 });
    const unknown = directiveOf('MUSUBI-MODEL: {"explode": true}');
    expect(unknown).toMatchObject({ kind: 'error', status: 400 });
    expect(unknown?.kind === 'error' && unknown.message).toContain('unknown directive');
  });

  it('takes the directive before the first matching rule, and the default last', () => {
    const script = {
      rules: [
        { match: 'decompose', then: { kind: 'reply', text: 'rule 1' } as const },
        { system: 'reviewer', then: { kind: 'reply', text: 'rule 2' } as const },
      ],
      default: { kind: 'echo' } as const,
    };
    expect(behaviourFor(script, { prompt: 'please decompose', system: '', model: 'm' })).toEqual({
      kind: 'reply',
      text: 'rule 1',
    });
    expect(behaviourFor(script, { prompt: 'x', system: 'you are a reviewer', model: 'm' })).toMatchObject({
      text: 'rule 2',
    });
    expect(behaviourFor(script, { prompt: 'x', system: '', model: 'm' })).toEqual({ kind: 'echo' });
    expect(
      behaviourFor(script, { prompt: 'decompose\nMUSUBI-MODEL: "hang"', system: '', model: 'm' }),
    ).toEqual({ kind: 'hang' });
    expect(behaviourFor(DEFAULT_SCRIPT, { prompt: 'x', system: '', model: 'm' })).toEqual({ kind: 'auto' });
  });
});

describe('model endpoint script file', () => {
  it('loads YAML rules and rejects bad ones with the file and path named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-script-'));
    try {
      const good = join(dir, 'good.yaml');
      await writeFile(good, 'rules:\n  - match: "^plan"\n    then: { reply: "planned" }\ndefault: echo\n');
      expect(await loadEndpointScript(good)).toEqual({
        rules: [{ match: '^plan', then: { kind: 'reply', text: 'planned' } }],
        default: { kind: 'echo' },
      });
      const badRegex = join(dir, 'bad-regex.yaml');
      await writeFile(badRegex, 'rules:\n  - match: "("\n    then: echo\n');
      await expect(loadEndpointScript(badRegex)).rejects.toThrow(
        /rules\[0\]\.match is not a regular expression/,
      );
      const badKind = join(dir, 'bad-kind.yaml');
      await writeFile(badKind, 'default: { dance: true }\n');
      const err: unknown = await loadEndpointScript(badKind).catch((e: unknown) => e);
      expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
      expect(String(err)).toContain('bad-kind.yaml');
      await expect(loadEndpointScript(join(dir, 'missing.yaml'))).rejects.toThrow(/cannot read script/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
