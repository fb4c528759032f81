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
  readonly role?: string;
  readonly href?: string;
  readonly tabIndex?: number;
  /** Other plain attributes (`for`, `name`, `min`, `autocomplete`…); never `style` or an `on…` handler. */
  readonly attrs?: Readonly<Record<string, string>>;
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
  if (props.role !== undefined) node.setAttribute('role', props.role);
  if (props.href !== undefined) node.setAttribute('href', props.href);
  if (props.tabIndex !== undefined) node.tabIndex = props.tabIndex;
  for (const [k, v] of Object.entries(props.attrs ?? {})) node.setAttribute(checkedAttr(k), v);
  for (const [k, v] of Object.entries(props.data ?? {})) node.dataset[k] = v;
  for (const [k, v] of Object.entries(props.aria ?? {})) node.setAttribute(`aria-${k}`, v);
  if (props.onClick !== undefined) {
    node.addEventListener('click', props.onClick);
    markListened(node);
  }
  append(node, children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Builds an SVG element with plain attributes (numbers are written as they are); text children
 * become text nodes, as with {@link el}.
 */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string | number>> = {},
  ...children: readonly Child[]
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(checkedAttr(k), String(v));
  append(node, children);
  return node;
}

/** Refuses the attributes that would run or style markup (the CSP blocks them anyway). */
function checkedAttr(name: string): string {
  if (/^on/i.test(name) || name.toLowerCase() === 'style' || name.toLowerCase() === 'srcdoc')
    throw new Error(`attribute ${name} is not allowed`);
  return name;
}

/** Appends children (text escaped as above). */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? text(child) : child);
  }
}

/** Elements with a listener of their own: never patched in place (their handler may be stale). */
const listened = new WeakSet<Node>();

/** Records that `node` has an event listener added outside {@link el} (see {@link replaceChildren}). */
export function markListened(node: Node): void {
  listened.add(node);
}

/**
 * Makes `children` the children of `parent`, keeping every current child that equals its replacement
 * (`isEqualNode`; matched by `data-key` when it has one, else by position), and patching in place a
 * child that differs only inside: same tag and key, no listener of its own (its attributes are copied,
 * its children reconciled the same way). Kept nodes stay in the document, so focus, a button under the
 * pointer, an opened `<details>` and typed text survive a refresh, and an entry animation plays once.
 */
export function replaceChildren(parent: Element, ...children: readonly Child[]): void {
  reconcile(parent, toNodes(children));
}

function reconcile(parent: Element, fresh: readonly Node[]): void {
  const keyed = new Map<string, ChildNode>();
  parent.childNodes.forEach((node) => {
    const key = keyOf(node);
    if (key !== undefined) keyed.set(key, node);
  });
  let at: ChildNode | null = parent.firstChild;
  for (const next of fresh) {
    const key = keyOf(next);
    const candidate = key === undefined ? at : keyed.get(key);
    if (key !== undefined) keyed.delete(key);
    const node = candidate === null || candidate === undefined ? next : kept(candidate, next);
    if (node === at) at = at.nextSibling;
    else parent.insertBefore(node, at);
  }
  while (at !== null) {
    const following: ChildNode | null = at.nextSibling;
    at.remove();
    at = following;
  }
}

/** `old` made like `fresh` where that is safe, else `fresh`. */
function kept(old: ChildNode, fresh: Node): Node {
  if (old === fresh || old.isEqualNode(fresh)) return old;
  if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) return fresh;
  if (old instanceof Text) {
    old.nodeValue = fresh.nodeValue;
    return old;
  }
  if (!(old instanceof Element) || !(fresh instanceof Element)) return fresh;
  if (listened.has(old) || listened.has(fresh) || keyOf(old) !== keyOf(fresh)) return fresh;
  copyAttributes(old, fresh);
  reconcile(old, [...fresh.childNodes]);
  return old;
}

function copyAttributes(old: Element, fresh: Element): void {
  for (const name of old.getAttributeNames()) {
    // `open` on <details> is the reader's choice, not the render's.
    if (!fresh.hasAttribute(name) && !(name === 'open' && old.localName === 'details'))
      old.removeAttribute(name);
  }
  for (const attr of fresh.attributes) {
    if (attr.name === 'style') {
      // Through the CSSOM: the page's CSP refuses style attributes set as markup.
      if (old instanceof HTMLElement || old instanceof SVGElement)
        if (fresh instanceof HTMLElement || fresh instanceof SVGElement)
          old.style.cssText = fresh.style.cssText;
    } else if (old.getAttribute(attr.name) !== attr.value) old.setAttribute(attr.name, attr.value);
  }
}

function keyOf(node: Node): string | undefined {
  return node instanceof HTMLElement || node instanceof SVGElement ? node.dataset.key : undefined;
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
