import type { Logger } from '../../core/logger.js';
import { ALL_DIALECTS } from './dialects/index.js';
import type { EndpointScript } from './model-behaviour.js';
import { ModelEndpoint } from './model-endpoint.js';
import type { LoggedRequest } from './request-log.js';

/** Options of {@link createModelEndpoint}. */
export interface CreateModelEndpointOptions {
  readonly script?: EndpointScript;
  readonly logger?: Logger;
  readonly host?: string;
  readonly port?: number;
  readonly onRequest?: (entry: LoggedRequest) => void;
}

/** The local model endpoint speaking every dialect (Anthropic, OpenAI Responses and Chat, Gemini); not started. */
export function createModelEndpoint(options: CreateModelEndpointOptions = {}): ModelEndpoint {
  return new ModelEndpoint({ dialects: ALL_DIALECTS, ...options });
}
