import type { Dialect } from '../dialect.js';
import { anthropicMessagesDialect } from './anthropic-messages.js';
import { geminiGenerateDialect } from './gemini-generate.js';
import { openaiChatDialect } from './openai-chat.js';
import { openaiResponsesDialect } from './openai-responses.js';

/** Every model API the endpoint speaks, tried in this order for each request. */
export const ALL_DIALECTS: readonly Dialect[] = [
  anthropicMessagesDialect,
  openaiResponsesDialect,
  openaiChatDialect,
  geminiGenerateDialect,
];
