import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

/** A tool's structured result: a JSON object, also rendered as text for clients that only read text. */
export type ToolValue = Record<string, unknown>;

function errorResult(error: MusubiError): CallToolResult {
  const wire = error.toJSON();
  return {
    isError: true,
    content: [{ type: 'text', text: `${wire.code}: ${wire.message}` }],
    structuredContent: { error: wire },
  };
}

/**
 * Runs one tool call and shapes its MCP result. A resolved value becomes `structuredContent` plus the
 * same JSON as text. A MusubiError becomes a tool error (`isError: true`) whose text starts with its
 * code (`NOT_FOUND: ...`) and whose `structuredContent.error` is `{ code, message, details? }`; any other
 * failure is logged and reported as `INTERNAL` without its stack. Never rejects.
 */
export async function toolOutcome(
  tool: string,
  logger: Logger,
  run: () => Promise<ToolValue>,
): Promise<CallToolResult> {
  try {
    const value = await run();
    return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
  } catch (err) {
    if (isMusubiError(err)) {
      logger.debug({ tool, err: { code: err.code, message: err.message } }, 'tool call failed');
      return errorResult(err);
    }
    logger.error({ tool, err }, 'tool call failed unexpectedly');
    const message = err instanceof Error ? err.message : String(err);
    return errorResult(new MusubiError('INTERNAL', `${tool} failed: ${message}`));
  }
}
