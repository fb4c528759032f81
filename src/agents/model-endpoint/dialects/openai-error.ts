const ERROR_TYPES: Readonly<Record<number, readonly [type: string, code: string | null]>> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['permission_error', null],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['rate_limit_error', 'rate_limit_exceeded'],
};

/** The OpenAI APIs' error object (Responses and Chat Completions): `{"error":{"message","type","param","code"}}`. */
export function openaiErrorBody(status: number, message: string): unknown {
  const [type, code] =
    ERROR_TYPES[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
  return { error: { message, type, param: null, code } };
}
