import type { ServiceContext } from '../context.js';
import { indexNewTitles } from '../store/pause-search.js';

// SQLite only: puts the titles of new pauses into the text index the
// console's search reads, a batch at a time, and looks for more every
// IDLE_SLEEP_MS, so a pause can be found by its title within about that.

export const BATCH_SIZE = 1000;
export const IDLE_SLEEP_MS = 250;

export function indexTitlesTick(services: Pick<ServiceContext, 'store'>) {
  return async (): Promise<number> => {
    while ((await indexNewTitles(services.store, BATCH_SIZE)) >= BATCH_SIZE) {
      // a full batch: more may be waiting
    }
    return IDLE_SLEEP_MS;
  };
}
