// The arithmetic of the message log's virtual list (rows of one fixed height): which rows to build
// for a scroll position, and where to move the scroll position when rows are added above it. No DOM.

/** What the list looks like now. */
export interface WindowInput {
  /** How many rows the list has. */
  readonly count: number;
  readonly rowHeightPx: number;
  readonly scrollTopPx: number;
  /** The height of the scroll box's visible part. */
  readonly viewportPx: number;
  /** Rows built beyond each edge of the visible part, so a fast scroll does not show a gap. */
  readonly overscan: number;
}

/** The rows to build, `[start, end)`, and where they sit. */
export interface VirtualWindow {
  readonly start: number;
  readonly end: number;
  /** The first built row's top, from the top of the list. */
  readonly offsetPx: number;
  /** The height of the whole list, so the scroll bar is right. */
  readonly totalPx: number;
}

/** The rows to build for a scroll position; never more than the visible rows plus twice the overscan. */
export function virtualWindow(input: WindowInput): VirtualWindow {
  const { count, overscan } = input;
  const rowPx = Math.max(1, input.rowHeightPx);
  const totalPx = count * rowPx;
  // A scroll position past the end (the list just shrank) counts as the end.
  const top = Math.min(Math.max(0, input.scrollTopPx), Math.max(0, totalPx - input.viewportPx));
  const firstVisible = Math.floor(top / rowPx);
  const visible = Math.ceil(Math.max(0, input.viewportPx) / rowPx) + 1;
  const start = Math.max(0, firstVisible - overscan);
  const end = Math.min(count, firstVisible + visible + overscan);
  return { start: Math.min(start, end), end, offsetPx: Math.min(start, end) * rowPx, totalPx };
}

/**
 * The scroll position that keeps the rows in view where they are after `addedAbove` rows were put above
 * them (new messages arrive at the top): unchanged at the very top, so a reader there keeps seeing the
 * newest, else moved down by as many rows.
 */
export function anchoredScrollTop(scrollTopPx: number, addedAbove: number, rowHeightPx: number): number {
  if (scrollTopPx <= 0 || addedAbove <= 0) return scrollTopPx;
  return scrollTopPx + addedAbove * rowHeightPx;
}
