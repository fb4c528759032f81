import type { ServerResponse } from 'node:http';

/**
 * Writes one server-sent-events answer. With `isCut` the connection is destroyed right after the first
 * event, as a proxy or a flaky network drops a stream; later events are then ignored.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #isCut: boolean;
  #isDone = false;

  constructor(res: ServerResponse, options: { readonly isCut: boolean }) {
    this.#res = res;
    this.#isCut = options.isCut;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
  }

  /** Sends `data` (JSON-encoded unless a string) as one event, named when `event` is given. */
  event(data: unknown, event?: string): void {
    if (this.#isDone) return;
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    const lines = payload
      .split('\n')
      .map((l) => `data: ${l}`)
      .join('\n');
    this.#res.write(`${event === undefined ? '' : `event: ${event}\n`}${lines}\n\n`);
    if (this.#isCut) {
      this.#isDone = true;
      // Let the first event reach the client, then drop the connection without a proper end.
      setTimeout(() => this.#res.socket?.destroy(), 20).unref();
    }
  }

  /** Ends the stream normally (no-op after a cut). */
  end(): void {
    if (this.#isDone) return;
    this.#isDone = true;
    this.#res.end();
  }
}
