/**
 * The API-neutral view of one model request and the answer the endpoint plans for it. Each dialect
 * (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Gemini) reads its request body into a
 * {@link ConversationView} and writes a {@link PlannedResponse} back in its own wire shape.
 */

/** A tool the CLI offered the model, with its JSON schema (absent for free-form tools). */
export interface OfferedTool {
  readonly name: string;
  /** JSON schema of the tool's arguments (`input_schema`, `parameters`, `parametersJsonSchema`). */
  readonly schema?: unknown;
  /** `custom`: a free-form tool whose input is plain text (codex `apply_patch` on the Responses API). */
  readonly kind: 'function' | 'custom';
}

/** A tool call the model made earlier in the conversation, as the CLI sent it back. */
export interface MadeToolCall {
  readonly name: string;
  readonly input: unknown;
}

/** What the model was asked, as far as planning the answer needs. */
export interface ConversationView {
  /** The model the CLI asked for. */
  readonly model: string;
  /** The CLI asked for a streamed answer (SSE). */
  readonly stream: boolean;
  readonly tools: readonly OfferedTool[];
  /** The system prompt / instructions, joined. */
  readonly systemText: string;
  /** Every user text of the conversation in order (tool results excluded). */
  readonly userTexts: readonly string[];
  /** Tool results since the last user text: the model's earlier steps in this turn. */
  readonly toolResultsSinceUser: number;
  /**
   * The model's tool calls since the last user text, oldest first, when the dialect reads them (Anthropic
   * Messages): the planner sees which steps of the turn were made, e.g. whether a file was read before
   * its write.
   */
  readonly toolCallsSinceUser?: readonly MadeToolCall[];
  /** The output of the last tool result, when the last message is one. */
  readonly lastToolOutput?: string;
  /** The CLI asked for JSON output (Gemini `responseMimeType`, OpenAI `response_format`/`text.format`). */
  readonly wantsJson: boolean;
  /** The JSON schema the answer must match, when the dialect reads one (Gemini `responseJsonSchema`). */
  readonly jsonSchema?: unknown;
  /** The CLI's working directory when the dialect knows it; else the planner looks for it in the prompts. */
  readonly cwd?: string;
  /** Rough size of the whole request in characters, for the usage the endpoint reports. */
  readonly inputChars: number;
}

/** One step of the model's answer. */
export type ModelAction =
  | { readonly kind: 'text'; readonly text: string }
  | {
      readonly kind: 'tool';
      readonly callId: string;
      readonly name: string;
      /** Arguments of a function tool. */
      readonly input: Readonly<Record<string, unknown>>;
      /** The text input of a free-form (custom) tool. */
      readonly freeform?: string;
    }
  | { readonly kind: 'error'; readonly status: number; readonly message: string }
  | { readonly kind: 'hang' };

/** The planned answer to one request. */
export interface PlannedResponse {
  readonly action: ModelAction;
  /** Streamed answers only: end the connection after the first event (a dropped stream). */
  readonly isCut: boolean;
  /** Token counts the endpoint reports for this request (deterministic from the sizes). */
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

/** The last user text of a view ('' when there is none). */
export function lastUserText(view: ConversationView): string {
  return view.userTexts.at(-1) ?? '';
}
