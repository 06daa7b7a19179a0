import type { Static } from 'typebox';
import { cancelOwnedPause } from '../../actions/cancel-pause.js';
import {
  CreatePauseInput,
  type CreatePauseServices,
  createPause,
  IdempotentReplay,
  newPauseRules,
} from '../../actions/create-pause.js';
import { listOwnedPauses, readOwnedPause } from '../../actions/read-pauses.js';
import type { ServiceContext } from '../../context.js';
import { ApiError } from '../../errors.js';
import { bodyChecker } from '../../http/validation.js';
import { type NewQuestion, type Question, QuestionError, type Questions } from '../../mcp/questions.js';
import type { Owner } from '../../store/pauses.js';

// The MCP tools' questions in the service itself (/mcp): the same actions as
// the API, for the key's owner and mode, with the create checked against the
// action's input schema, as the API checks it, so an MCP call meets exactly the API's rules.

const checkCreate = bodyChecker<Static<typeof CreatePauseInput>>(CreatePauseInput);

export class LocalQuestions implements Questions {
  /** `waiter`: the API key, whose concurrent waits are capped as the long-poll's are. */
  constructor(
    private readonly services: CreatePauseServices & Pick<ServiceContext, 'waiters'>,
    private readonly owner: Owner,
    private readonly waiter: string,
  ) {}

  create(question: NewQuestion): Promise<Question> {
    return reported(async () => {
      // No Idempotency-Key: the call is not retried by anything in between.
      const created = await createPause(
        this.services,
        this.owner,
        checkCreate(question, newPauseRules(this.services)),
        undefined,
      );
      return created instanceof IdempotentReplay ? created.pause : created;
    });
  }

  wait(pauseId: string, waitSeconds: number, signal: AbortSignal): Promise<Question> {
    return reported(() =>
      readOwnedPause(this.services, this.owner, pauseId, { waitSeconds, signal, waiter: this.waiter }),
    );
  }

  cancel(pauseId: string): Promise<Question> {
    return reported(() => cancelOwnedPause(this.services, this.owner, pauseId));
  }

  listPending(limit: number): Promise<{ questions: Question[]; hasMore: boolean }> {
    return reported(async () => {
      const { data, hasMore } = await listOwnedPauses(this.services, this.owner, { status: 'pending', limit });
      return { questions: data, hasMore };
    });
  }
}

/** The API's errors as QuestionErrors, with the code and message the API would answer with. */
async function reported<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiError) throw new QuestionError(error.code, error.message, error.details);
    throw error;
  }
}
