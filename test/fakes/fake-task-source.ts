import type { Bus } from '../../src/bus/bus.types.js';
import { MusubiError } from '../../src/core/errors.js';
import type { TaskSource, TaskView } from '../../src/gateways/http/http-ports.js';

const ACTIVE = new Set(['queued', 'running']);

/**
 * An in-memory task registry behind the HTTP gateway's TaskSource port: `put` adds or replaces a task,
 * `cancel` ends an active one as `cancelled`; both publish `task.changed` like the real registry.
 */
export class FakeTaskSource implements TaskSource {
  readonly #tasks = new Map<string, TaskView>();
  readonly #bus: Pick<Bus, 'publish'>;

  constructor(bus: Pick<Bus, 'publish'>) {
    this.#bus = bus;
  }

  async put(task: TaskView): Promise<void> {
    this.#tasks.set(task.id, task);
    await this.#bus.publish({ type: 'task.changed', data: { id: task.id, state: task.state } });
  }

  get(id: string): TaskView | undefined {
    return this.#tasks.get(id);
  }

  async list(): Promise<readonly TaskView[]> {
    return [...this.#tasks.values()];
  }

  async cancel(id: string): Promise<TaskView> {
    const task = this.#tasks.get(id);
    if (task === undefined) throw new MusubiError('NOT_FOUND', `no task ${JSON.stringify(id)}`);
    if (!ACTIVE.has(task.state)) return task;
    await this.put({ ...task, state: 'cancelled', detail: 'Cancelled by user' });
    return this.#tasks.get(id) ?? task;
  }
}
