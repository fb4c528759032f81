/**
 * The role organisation (IGNITE's pattern): one leader, five sub-leaders and N workers handing work along
 * by typed messages. Gateway-agnostic: roles, who receives which message types and whom each answers.
 */

/** The roles, the leader first; every worker `ignitian_<n>` has the role `ignitian`. */
export const ORG_ROLES = [
  'leader',
  'strategist',
  'architect',
  'evaluator',
  'coordinator',
  'innovator',
  'ignitian',
] as const;

/** One role of the organisation. */
export type OrgRole = (typeof ORG_ROLES)[number];

/** What a role receives and what it sends to whom (the message protocol of the organisation). */
export interface RoleProtocol {
  readonly purpose: string;
  readonly receives: readonly string[];
  /** `<type> -> <recipient>` lines: when and what to send. */
  readonly sends: ReadonlyArray<readonly [when: string, type: string, to: string]>;
}

/** The protocol of every role (spec/ignite.md 3.7, informative). */
export const ROLE_PROTOCOLS: Readonly<Record<OrgRole, RoleProtocol>> = {
  leader: {
    purpose:
      'owns the goal: turns the user goal into a plan with the strategist, hands the plan to the coordinator, and judges the results',
    receives: [
      'user_goal',
      'github_task',
      'strategy_response',
      'architecture_response',
      'evaluation_result',
      'progress_update',
      'escalation',
      'dead_letter',
      'help_request',
      'issue_proposal',
      'notification',
    ],
    sends: [
      ['a user_goal or github_task arrives', 'strategy_request', 'strategist'],
      ['the strategy_response arrives', 'task_list', 'coordinator'],
      ['an escalation arrives and the task can be re-planned', 'task_list', 'coordinator'],
    ],
  },
  strategist: {
    purpose:
      'breaks a goal into concrete, independent tasks, consulting architect, evaluator and innovator when useful',
    receives: ['strategy_request', 'design_review_response', 'quality_plan_response', 'insight_response'],
    sends: [
      ['the design needs a review', 'design_review_request', 'architect'],
      ['acceptance criteria are unclear', 'quality_plan_request', 'evaluator'],
      ['a fresh idea would help', 'insight_request', 'innovator'],
      [
        'the plan is ready (body: goal and a `tasks: |` list, one task per line)',
        'strategy_response',
        'leader',
      ],
    ],
  },
  architect: {
    purpose: 'reviews designs and answers architecture questions',
    receives: ['design_review_request', 'architecture_request', 'review_request'],
    sends: [
      ['a design_review_request arrives', 'design_review_response', 'the sender'],
      ['an architecture_request arrives', 'architecture_response', 'the sender'],
    ],
  },
  evaluator: {
    purpose: 'defines acceptance criteria and evaluates finished tasks',
    receives: ['quality_plan_request', 'evaluation_request'],
    sends: [
      ['a quality_plan_request arrives', 'quality_plan_response', 'the sender'],
      [
        'an evaluation_request arrives (body: task_id, title, verdict, findings)',
        'evaluation_result',
        'leader',
      ],
    ],
  },
  coordinator: {
    purpose: 'assigns tasks to the workers, tracks completion and reports progress',
    receives: ['task_list', 'task_completed', 'help_request'],
    sends: [
      [
        'a task_list arrives: one message per task, spread over the workers (body: task_id, title, description)',
        'task_assignment',
        'ignitian_<n>',
      ],
      ['a task_completed arrives', 'evaluation_request', 'evaluator'],
      [
        'tasks are assigned or completed (body: stage, percent, summary, completed, total_tasks)',
        'progress_update',
        'leader',
      ],
    ],
  },
  innovator: {
    purpose: 'proposes improvements and alternative approaches',
    receives: ['insight_request', 'improvement_request'],
    sends: [
      ['an insight_request arrives', 'insight_response', 'the sender'],
      ['an improvement_request arrives', 'improvement_suggestion', 'the sender'],
    ],
  },
  ignitian: {
    purpose: 'does one task at a time in the workspace: writes the code, runs the checks',
    receives: ['task_assignment', 'revision_request'],
    sends: [
      ['the task is done (body: task_id, title, result)', 'task_completed', 'coordinator'],
      ['you are blocked', 'help_request', 'coordinator'],
    ],
  },
};

/** The role of an agent name (`ignitian_3` -> `ignitian`), or null for a name outside the organisation. */
export function roleOf(agent: string): OrgRole | null {
  if (/^ignitian[-_]\d+$/.test(agent)) return 'ignitian';
  return ORG_ROLES.find((r) => r === agent && r !== 'ignitian') ?? null;
}

/** Every agent of an organisation with `workers` workers: the six fixed roles, then `ignitian_1..n`. */
export function orgAgents(workers: number): string[] {
  return [
    ...ORG_ROLES.filter((r) => r !== 'ignitian'),
    ...Array.from({ length: workers }, (_, i) => `ignitian_${i + 1}`),
  ];
}
