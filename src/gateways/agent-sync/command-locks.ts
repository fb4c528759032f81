interface Request {
  /** Null: exclusive (conflicts with everything). Otherwise the mailbox keys it needs alone. */
  readonly keys: ReadonlySet<string> | null;
  readonly start: () => void;
}

function conflicts(a: Request, b: Request): boolean {
  if (a.keys === null || b.keys === null) return true;
  for (const key of a.keys) if (b.keys.has(key)) return true;
  return false;
}

function conflictsWithAny(requests: Iterable<Request>, request: Request): boolean {
  for (const other of requests) if (conflicts(other, request)) return true;
  return false;
}

/**
 * Makes agent_sync commands atomic with respect to each other while letting independent ones overlap
 * (so the store can commit their writes together). A state command runs alone; a mailbox command runs
 * alongside others that touch different mailboxes. Conflicting requests run in the order they were made,
 * and a request is queued synchronously by the call: whatever is requested later, and conflicts, runs later.
 */
export class CommandLocks {
  readonly #waiting: Request[] = [];
  readonly #running = new Set<Request>();

  /** Runs `task` with nothing else running (commands that read or change the round state). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.#run(null, task);
  }

  /** Runs `task` once no running or earlier request touches any of `keys` and no state command runs. */
  mailboxes<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    return this.#run(new Set(keys), task);
  }

  #run<T>(keys: ReadonlySet<string> | null, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const request: Request = {
        keys,
        start: () => {
          this.#running.add(request);
          let running: Promise<T>;
          try {
            running = task();
          } catch (err) {
            running = Promise.reject(err instanceof Error ? err : new Error(String(err)));
          }
          running.then(resolve, reject).finally(() => {
            this.#running.delete(request);
            this.#dispatch();
          });
        },
      };
      this.#waiting.push(request);
      this.#dispatch();
    });
  }

  /** Starts, in order, every waiting request that conflicts with nothing running or waiting before it. */
  #dispatch(): void {
    const skipped: Request[] = [];
    for (let i = 0; i < this.#waiting.length;) {
      const request = this.#waiting[i];
      if (request === undefined) break;
      const isBlocked = conflictsWithAny(this.#running, request) || conflictsWithAny(skipped, request);
      if (isBlocked) {
        skipped.push(request);
        if (request.keys === null) break; // nothing may pass a waiting state command
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      request.start();
    }
  }
}
