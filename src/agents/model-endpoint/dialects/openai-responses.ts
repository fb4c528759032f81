import type { Dialect } from '../dialect.js';

// Being written in this session (the helper for this API replaces this file); matches nothing yet.
export const openaiResponsesDialect: Dialect = {
  name: 'openai-responses',
  matches: () => false,
  read: () => {
    throw new Error('openai-responses dialect not written yet');
  },
  write: () => undefined,
  errorBody: (_status, message) => ({ error: { message } }),
};
