import { describe, expect, it } from 'vitest';
import { parseAgentsList } from './agents-list.js';

describe('parseAgentsList', () => {
  it('trims, drops empty items and keeps order and duplicates', () => {
    expect(parseAgentsList(' agent-a, agent-b ,agent-c')).toEqual(['agent-a', 'agent-b', 'agent-c']);
    expect(parseAgentsList('a,,b,\u3000a\u3000,')).toEqual(['a', 'b', 'a']);
  });

  it('defaults to agent-a, agent-b when unset and gives no agents when set but empty', () => {
    expect(parseAgentsList(undefined)).toEqual(['agent-a', 'agent-b']);
    expect(parseAgentsList('')).toEqual([]);
    expect(parseAgentsList(' , ')).toEqual([]);
  });

  it('strips Python whitespace but not the BOM', () => {
    expect(parseAgentsList('\u001fx\u0085')).toEqual(['x']);
    expect(parseAgentsList('\ufeffx')).toEqual(['\ufeffx']);
  });
});
