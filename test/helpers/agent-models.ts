import type { Model, ModelRequest, ModelResponse } from '@openai/agents';
import { Usage } from '@openai/agents';
import { MockLanguageModelV3 } from 'ai/test';
import { expect } from 'vitest';
import type { Pause } from '../../sdk/src/index.js';
import { call } from './http.js';
import { tokenOf } from './pauses.js';

// Stand-ins for an LLM, each framework's own way: they return scripted tool
// calls and keep what they were sent, so a test can read the tool results the
// model saw. And a person who answers the pauses the adapters create.

/** One tool call a scripted model makes. */
export interface ScriptedCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A step of a script: the tool calls of one model response, or its closing text. */
export type ScriptStep = ScriptedCall[] | string;

const AI_USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** An AI SDK model (the SDK's own MockLanguageModelV3) that answers with the steps in turn. */
export function scriptedAiModel(steps: ScriptStep[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: steps.map((step) =>
      typeof step === 'string'
        ? {
            content: [{ type: 'text' as const, text: step }],
            finishReason: { unified: 'stop' as const, raw: 'stop' },
            usage: AI_USAGE,
            warnings: [],
          }
        : {
            content: step.map((toolCall) => ({
              type: 'tool-call' as const,
              toolCallId: toolCall.id,
              toolName: toolCall.name,
              input: JSON.stringify(toolCall.input),
            })),
            finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
            usage: AI_USAGE,
            warnings: [],
          },
    ),
  });
}

/** The tool results the AI SDK model was sent on its call number `index`, by tool call id. */
export function toolResultsSentTo(model: MockLanguageModelV3, index: number): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  for (const message of model.doGenerateCalls[index]?.prompt ?? []) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result') results[part.toolCallId] = part.output;
    }
  }
  return results;
}

/** An OpenAI Agents model (a custom `Model`) that answers with the steps in turn and keeps every request. */
export class ScriptedAgentsModel implements Model {
  readonly requests: ModelRequest[] = [];
  #next = 0;

  constructor(private readonly steps: ScriptStep[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(structuredClone(request));
    const step = this.steps[this.#next++];
    if (step === undefined) throw new Error('the script has no more steps');
    const output: ModelResponse['output'] =
      typeof step === 'string'
        ? [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: step }],
            },
          ]
        : step.map((toolCall) => ({
            type: 'function_call' as const,
            callId: toolCall.id,
            name: toolCall.name,
            arguments: JSON.stringify(toolCall.input),
            status: 'completed' as const,
          }));
    return { usage: new Usage(), output };
  }

  // biome-ignore lint/correctness/useYield: a scripted model that never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}

/** The function call results in an Agents model request's input, by call id. */
export function functionResultsIn(request: ModelRequest | undefined): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  if (!request || typeof request.input === 'string') return results;
  for (const item of request.input) {
    if (item.type === 'function_call_result') results[item.callId] = item.output;
  }
  return results;
}

/** Pauses as an adapter creates them (pass `inbox.add` as `onPause`), to be answered in order. */
export class PauseInbox {
  readonly all: Pause[] = [];
  #waiting: ((pause: Pause) => void)[] = [];
  #unread: Pause[] = [];

  readonly add = (pause: Pause): void => {
    this.all.push(pause);
    const waiter = this.#waiting.shift();
    if (waiter) waiter(pause);
    else this.#unread.push(pause);
  };

  /** The next pause created (or the oldest one not taken yet). */
  next(): Promise<Pause> {
    const unread = this.#unread.shift();
    if (unread) return Promise.resolve(unread);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** Answers a pause as its person would, through the response endpoint; `values` fill in its form. */
export async function answerPause(
  baseUrl: string,
  pause: { response_url: string | null },
  choice: string,
  text?: string,
  values?: Record<string, unknown>,
) {
  const reply = await call(baseUrl, 'POST', `/v1/respond/${tokenOf(pause)}`, {
    body: { choice, ...(text === undefined ? {} : { text }), ...(values === undefined ? {} : { values }) },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}
