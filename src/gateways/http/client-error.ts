import type { Socket } from 'node:net';

/**
 * A fastify `clientErrorHandler` for requests Node's HTTP parser rejects before any route sees them (a
 * NUL in the request line, a malformed header, headers too large): answers in the server's own error
 * shape, `body(message)`, instead of fastify's `{"error", "message", "statusCode"}`, then closes.
 */
export function clientErrorHandler(
  body: (message: string) => object,
): (err: Error & { code?: string }, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const isTooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = isTooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const text = JSON.stringify(body(isTooLarge ? 'request headers too large' : 'malformed HTTP request'));
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text, 'utf8')}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
}
