import { type Pausepoint, PausepointError } from '@pausepoint/sdk';
import type { NewQuestion, Question, Questions } from './questions.js';
import { QuestionError } from './questions.js';

// The tools' questions over the API, through @pausepoint/sdk: what
// `pausepoint mcp` (stdio) uses, with the key and service it was given.

export class RemoteQuestions implements Questions {
  constructor(private readonly client: Pausepoint) {}

  create(question: NewQuestion, signal: AbortSignal): Promise<Question> {
    // The SDK generates an Idempotency-Key, so a retried create makes one pause.
    return reported(() => this.client.pauses.create(question, { signal }));
  }

  wait(pauseId: string, waitSeconds: number, signal: AbortSignal): Promise<Question> {
    return reported(() => this.client.pauses.get(pauseId, { wait: waitSeconds, signal }));
  }

  cancel(pauseId: string, signal: AbortSignal): Promise<Question> {
    return reported(() => this.client.pauses.cancel(pauseId, { signal }));
  }

  async listPending(limit: number, signal: AbortSignal): Promise<{ questions: Question[]; hasMore: boolean }> {
    // One page of limit + 1 says whether there are more.
    const pauses = await reported(() =>
      this.client.pauses.list({ status: 'pending', limit: limit + 1 }).toArray(limit + 1),
    );
    signal.throwIfAborted();
    return { questions: pauses.slice(0, limit), hasMore: pauses.length > limit };
  }
}

/** The SDK's errors (the API's, or no answer from it) as QuestionErrors. */
async function reported<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof PausepointError) throw new QuestionError(error.code, error.message, error.details);
    throw error;
  }
}
