import type { Dialect } from '../dialect.js';

// Being written in this session (the helper for this API replaces this file); matches nothing yet.
export const openaiChatDialect: Dialect = {
  name: 'openai-chat',
  matches: () => false,
  read: () => {
    throw new Error('openai-chat dialect not written yet');
  },
  write: () => undefined,
  errorBody: (_status, message) => ({ error: { message } }),
};
