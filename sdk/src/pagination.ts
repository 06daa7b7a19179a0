import type { ListPage } from './types.js';

/**
 * Every item of a paginated list, fetching pages as the loop needs them:
 * `for await (const pause of client.pauses.list()) …`. Breaking out of the
 * loop stops fetching. `toArray(max)` collects them.
 */
export class AutoPaginator<T extends { id: string }> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (startingAfter: string | undefined) => Promise<ListPage<T>>,
    private readonly startingAfter?: string,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    let after = this.startingAfter;
    for (;;) {
      const page = await this.fetchPage(after);
      for (const item of page.data) yield item;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      after = last.id;
    }
  }

  /** The items, up to `max` of them (all by default). */
  async toArray(max = Number.POSITIVE_INFINITY): Promise<T[]> {
    const items: T[] = [];
    if (max <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= max) break;
    }
    return items;
  }
}
