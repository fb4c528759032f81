import type { Dialect } from '../dialect.js';

// Being written in this session (the helper for this API replaces this file); matches nothing yet.
export const geminiGenerateDialect: Dialect = {
  name: 'gemini',
  matches: () => false,
  read: () => {
    throw new Error('gemini dialect not written yet');
  },
  write: () => undefined,
  errorBody: (_status, message) => ({ error: { message } }),
};
