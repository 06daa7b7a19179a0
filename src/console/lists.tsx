import type { Child } from '@pausepoint/jsx';
import type { Mode } from '../domain/keys.js';
import { ApiError } from '../errors.js';

// Parts shared by the console's list pages: the live/test switch, a status
// filter, the pager, and finding a developer's resource in either mode.

export function ModeSwitch({ mode, hrefOf }: { mode: Mode; hrefOf: (mode: Mode) => string }) {
  return (
    <nav class="switch" aria-label="Mode">
      <a href={hrefOf('live')} aria-current={mode === 'live' ? 'page' : undefined}>
        Live
      </a>
      <a href={hrefOf('test')} aria-current={mode === 'test' ? 'page' : undefined}>
        Test
      </a>
    </nav>
  );
}

interface StatusFilterProps<S extends string> {
  /** The page the form GETs. */
  action: string;
  mode: Mode;
  statuses: readonly S[];
  labels: Record<S, string>;
  selected: S | undefined;
  /** Other fields of the same form, shown before the status. */
  children?: Child;
}

/** A GET form choosing one status (or all); keeps the mode (named, as a list without one opens on the last used). */
export function StatusFilter<S extends string>({
  action,
  mode,
  statuses,
  labels,
  selected,
  children,
}: StatusFilterProps<S>) {
  return (
    <form method="get" action={action}>
      <input type="hidden" name="mode" value={mode} />
      {children}
      <div>
        <label for="status">Status</label>
        <select id="status" name="status">
          <option value="">All</option>
          {statuses.map((status) => (
            <option value={status} selected={selected === status}>
              {labels[status]}
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Show</button>
    </form>
  );
}

/** "Newest" once past the first page, and the next page's link when there is one. */
export function Pager({
  newest,
  older,
  children,
}: {
  newest?: string | undefined;
  older?: string | undefined;
  children?: Child;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      {newest ? <a href={newest}>Newest</a> : <span />}
      {older && (
        <a href={older} rel="next">
          {children}
        </a>
      )}
    </nav>
  );
}

/** The header of a table's column of buttons and links. */
export const ActionsHeader = () => (
  <th scope="col">
    <span class="visually-hidden">Actions</span>
  </th>
);

/**
 * The developer's resource in either mode, the hinted one first (a link may
 * lack the mode); undefined when `read` says not_found in both.
 */
export async function inEitherMode<T>(hint: Mode, read: (mode: Mode) => Promise<T>): Promise<T | undefined> {
  for (const mode of hint === 'live' ? (['live', 'test'] as const) : (['test', 'live'] as const)) {
    try {
      return await read(mode);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'not_found') throw error;
    }
  }
  return undefined;
}
