import { describe, expect, it } from 'vitest';
import { inboxKind, inboxTitle } from './inbox-items.js';

describe('inbox items', () => {
  it.each([
    ['result', '{"type":"result","summary":"ok"}', 'result'],
    ['yadon.result', 'x', 'result'],
    ['note', '{"type":"escalation"}', 'escalation'],
    ['message', 'type: report\ntitle: Weekly', 'report'],
    ['say', 'hello', 'reply'],
    ['review', 'hello', 'message'],
  ])('names %s %s a %s', (type, body, kind) => {
    expect(inboxKind(type, body)).toBe(kind);
  });

  it.each([
    ['{"type":"result","summary":"All  done\\nnow","output":"long"}', 'All done now'],
    ['{"result":"the answer"}', 'the answer'],
    [
      '{"type":"result","id":"t1","status":"success","payload":{"output":"…","summary":"3 files"}}',
      '3 files',
    ],
    ['type: report\ntitle: "Build fixed"\nbody: …', 'Build fixed'],
    ['\n\nfirst line\nsecond', 'first line'],
    ['{not json', '{not json'],
  ])('titles %j as %j', (body, title) => {
    expect(inboxTitle(body)).toBe(title);
  });

  it('cuts a long title to one line of 160 characters', () => {
    expect(inboxTitle('a'.repeat(500))).toHaveLength(160);
  });
});
