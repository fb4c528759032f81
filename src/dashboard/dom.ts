/** Attributes and handlers {@link el} may set. Text always goes through `textContent`, never HTML. */
export interface ElementProps {
  readonly class?: string;
  readonly title?: string;
  readonly id?: string;
  readonly type?: string;
  readonly value?: string;
  readonly placeholder?: string;
  readonly disabled?: boolean;
  readonly hidden?: boolean;
  readonly data?: Readonly<Record<string, string>>;
  readonly aria?: Readonly<Record<string, string>>;
  readonly onClick?: () => void;
}

/** A child: a node, text (escaped by construction), or nothing. */
export type Child = Node | string | number | null | undefined | false;

/**
 * Builds an element. Strings become text nodes, so data can never turn into markup: this module is the
 * page's only way to create elements, and nothing in the page assigns `innerHTML`.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  ...children: readonly Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class !== undefined) node.className = props.class;
  if (props.title !== undefined) node.title = props.title;
  if (props.id !== undefined) node.id = props.id;
  if (props.hidden === true) node.hidden = true;
  if (props.type !== undefined) node.setAttribute('type', props.type);
  if (props.placeholder !== undefined) node.setAttribute('placeholder', props.placeholder);
  if (props.value !== undefined && 'value' in node) node.value = props.value;
  if (props.disabled === true && 'disabled' in node) node.disabled = true;
  for (const [k, v] of Object.entries(props.data ?? {})) node.dataset[k] = v;
  for (const [k, v] of Object.entries(props.aria ?? {})) node.setAttribute(`aria-${k}`, v);
  if (props.onClick !== undefined) node.addEventListener('click', props.onClick);
  append(node, children);
  return node;
}

/** Appends children (text escaped as above). */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? text(child) : child);
  }
}

/**
 * Makes `children` the children of `parent`, keeping every current child that is equal to its
 * replacement (`isEqualNode`; matched by `data-key` when it has one, else by position). Kept nodes
 * stay in the document, so a button under the pointer survives a refresh and a row's entry animation
 * plays once; only what changed is replaced.
 */
export function replaceChildren(parent: Element, ...children: readonly Child[]): void {
  const keyed = new Map<string, ChildNode>();
  parent.childNodes.forEach((node) => {
    const key = keyOf(node);
    if (key !== undefined) keyed.set(key, node);
  });
  let at: ChildNode | null = parent.firstChild;
  for (const fresh of toNodes(children)) {
    const key = keyOf(fresh);
    const candidate = key === undefined ? at : keyed.get(key);
    if (key !== undefined) keyed.delete(key);
    const node =
      candidate !== null && candidate !== undefined && candidate.isEqualNode(fresh) ? candidate : fresh;
    if (node === at) at = at.nextSibling;
    else parent.insertBefore(node, at);
  }
  while (at !== null) {
    const next: ChildNode | null = at.nextSibling;
    at.remove();
    at = next;
  }
}

function keyOf(node: Node): string | undefined {
  return node instanceof HTMLElement ? node.dataset.key : undefined;
}

function toNodes(children: readonly Child[]): Node[] {
  return children.flatMap((c) =>
    c === null || c === undefined || c === false ? [] : [typeof c === 'object' ? c : text(c)],
  );
}

function text(value: string | number): Text {
  return document.createTextNode(String(value));
}

/** The element with `id`, which the page's HTML must contain. */
export function byId(id: string): HTMLElement {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`#${id} is missing from index.html`);
  return node;
}
