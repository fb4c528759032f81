import { el, replaceChildren } from './dom.js';
import { clip, formatAgo, formatDuration } from './text-format.js';
import type { Task, TasksReply } from '../gateways/http/api-schemas.js';

const ACTIVE = new Set(['running', 'queued']);
const FINISHED_SHOWN = 5;

/** What the task HUD's buttons do. */
export interface TaskActions {
  cancel(id: string): void;
}

function progressBar(task: Task): HTMLElement {
  const bar = el('div', { class: task.progress === undefined ? 'bar indeterminate' : 'bar' });
  if (task.progress !== undefined) bar.style.setProperty('--p', `${Math.round(task.progress * 100)}%`);
  return el(
    'div',
    {
      class: 'progress',
      role: 'progressbar',
      aria:
        task.progress === undefined
          ? { label: `${task.title ?? task.id}: in progress` }
          : {
              label: task.title ?? task.id,
              valuenow: String(Math.round(task.progress * 100)),
              valuemin: '0',
              valuemax: '100',
            },
    },
    bar,
  );
}

function taskRow(task: Task, nowMs: number, isBusy: boolean, actions: TaskActions): HTMLElement {
  const since = task.updatedAt ?? task.createdAt;
  const isActive = ACTIVE.has(task.state);
  const began = task.startedAt ?? task.createdAt;
  return el(
    'li',
    { class: `task task-${task.state}`, data: { task: task.id, key: `task:${task.id}` } },
    el(
      'div',
      { class: 'task-top' },
      el('span', { class: `task-state st-${task.state}` }, task.state),
      el(
        'span',
        { class: 'task-title', title: task.title ?? task.id },
        clip(task.title ?? task.kind ?? task.id, 90),
      ),
      isActive
        ? el(
            'button',
            {
              class: 'btn btn-small btn-danger',
              type: 'button',
              disabled: isBusy,
              onClick: () => actions.cancel(task.id),
              aria: { label: `cancel task ${task.id}` },
            },
            isBusy ? 'Cancelling…' : 'Cancel',
          )
        : null,
    ),
    task.state === 'running' ? progressBar(task) : null,
    el(
      'div',
      { class: 'task-meta' },
      task.agent === undefined ? null : el('span', {}, `@${task.agent}`),
      task.channel === undefined ? null : el('span', {}, task.channel),
      task.kind === undefined || task.title === undefined ? null : el('span', {}, task.kind),
      task.progress === undefined || task.state !== 'running'
        ? null
        : el('span', {}, `${Math.round(task.progress * 100)} %`),
      since === undefined
        ? null
        : el(
            'span',
            { class: 'muted' },
            isActive && began !== undefined ? formatDuration(nowMs - began) : formatAgo(since, nowMs),
          ),
    ),
    task.detail === undefined
      ? null
      : el('div', { class: isActive ? 'task-detail muted' : 'task-detail' }, clip(task.detail, 160)),
  );
}

/** Renders the task HUD: running, then queued, then the few most recent finished tasks. */
export function renderTasks(
  container: HTMLElement,
  reply: TasksReply | undefined,
  busy: ReadonlySet<string>,
  actions: TaskActions,
  nowMs: number,
): void {
  if (reply === undefined)
    return replaceChildren(container, el('div', { class: 'loading' }, 'Loading tasks…'));
  if (!reply.isAvailable)
    return replaceChildren(
      container,
      el('p', { class: 'empty-line' }, 'No task registry is connected to this hub.'),
    );
  const running = reply.tasks.filter((t) => t.state === 'running' || t.state === 'blocked');
  const queued = reply.tasks.filter((t) => t.state === 'queued');
  const finished = reply.tasks
    .filter((t) => !ACTIVE.has(t.state) && t.state !== 'blocked')
    .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0))
    .slice(0, FINISHED_SHOWN);
  const group = (title: string, tasks: readonly Task[]): HTMLElement | null =>
    tasks.length === 0
      ? null
      : el(
          'div',
          { class: 'task-group' },
          el('h3', {}, title, el('span', { class: 'count' }, String(tasks.length))),
          el(
            'ul',
            { class: 'task-list' },
            ...tasks.map((t) => taskRow(t, nowMs, busy.has(`task:${t.id}`), actions)),
          ),
        );
  if (reply.tasks.length === 0)
    return replaceChildren(container, el('p', { class: 'empty-line' }, 'No tasks. Idle and ready.'));
  replaceChildren(
    container,
    group('Running', running),
    group('Queued', queued),
    group('Recently finished', finished),
  );
}
