import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { answerAlways, askOnTerminal } from './escalation-prompt.js';

const escalation = {
  turn: 'r1-implement-sub1',
  title: 'r1-implement-sub1',
  member: 'worker-1.r1',
  attempts: 3,
  reason: 'stalled: no output for 300 s',
};

describe('the terminal answer to a given-up turn', () => {
  it('asks until a line names retry, skip or abort', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const answer = askOnTerminal(input, output)(escalation, new AbortController().signal);
    input.write('what?\n');
    input.write('  SKIP it\n');
    expect(await answer).toEqual({ choice: 'skip', by: 'you at the terminal' });
    expect(shown.match(/r1-implement-sub1: retry, skip, abort\? /g)).toHaveLength(2);
  });

  it('stops asking when another answer came first, or the input ends', async () => {
    const stop = new AbortController();
    const asked = askOnTerminal(new PassThrough(), new PassThrough())(escalation, stop.signal);
    stop.abort();
    expect(await asked).toBeUndefined();
    const input = new PassThrough();
    const ended = askOnTerminal(input, new PassThrough())(escalation, new AbortController().signal);
    input.end();
    expect(await ended).toBeUndefined();
  });

  it('answers at once by the standing rule of --on-dead-letter', async () => {
    expect(await answerAlways('abort')(escalation, new AbortController().signal)).toEqual({
      choice: 'abort',
      by: '--on-dead-letter abort',
    });
  });
});
