// A Vercel AI SDK agent whose refund tool runs only once a person approves it.
//
//   PAUSEPOINT_API_KEY=svc_test_… npx tsx examples/ai-sdk-guarded-tool.ts
//
// `guardTool` wraps the refund tool: each call first asks a person through
// pausepoint, showing the tool's name and its arguments as a form they may
// change (the tool's input schema, prefilled with the model's arguments), and
// waits. Approved, the refund runs once with the values they approved; when
// they changed any (say, the amount), the tool's result comes wrapped in an
// `EditedToolResult` whose message tells the model what changed. Rejected,
// expired or failed, it does not run and the model gets a refusal as the
// tool's result, with the reason, and carries on. The lookup tool is not guarded.
//
// The model here is the AI SDK's own MockLanguageModelV3 playing a script, so
// the example needs no LLM and no network; put a real model in its place
// (`model: openai('gpt-5')`) and nothing else changes.
import { guardTool, isEditedToolResult, isToolRefusal } from '@pausepoint/sdk/ai';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const orders = new Map([[1042, { customer: 'ada@example.com', total: 129.5, refunded: false }]]);

const lookupOrder = tool({
  description: 'Look up an order by its id',
  inputSchema: z.object({ order_id: z.number() }),
  execute: async ({ order_id }) => ({ order_id, ...orders.get(order_id) }),
});

const refundOrder = tool({
  description: 'Refund an order to the customer’s card',
  inputSchema: z.object({ order_id: z.number(), amount: z.number(), reason: z.string() }),
  execute: async ({ order_id, amount }) => {
    const order = orders.get(order_id);
    if (!order) return { error: `No order ${order_id}` };
    order.refunded = true;
    return { refunded: amount, order_id, to: order.customer };
  },
});

const agent = new ToolLoopAgent({
  model: scriptedModel(),
  instructions: 'You are a support agent. Refunds need a person’s approval.',
  tools: {
    lookup_order: lookupOrder,
    // The client comes from PAUSEPOINT_API_KEY and PAUSEPOINT_BASE_URL; pass { client } to choose another.
    refund_order: guardTool('refund_order', refundOrder, {
      pause: { expires_in: Number(process.env.APPROVAL_TIMEOUT_SECONDS ?? 600) },
      onPause: (pause) => console.error(`Approve or reject refund_order at: ${pause.response_url}`),
    }),
  },
  stopWhen: stepCountIs(5),
  onStepFinish: ({ toolResults }) => {
    for (const result of toolResults) console.log(`${result.toolName} -> ${JSON.stringify(result.output)}`);
  },
});

const result = await agent.generate({ prompt: 'Order 1042 never arrived. Please refund it.' });
console.log(`Agent: ${result.text}`);
console.log(`Order 1042 refunded: ${orders.get(1042)?.refunded}`);

/**
 * The stand-in for an LLM: looks the order up, asks for the refund, then
 * answers from what the refund tool returned (a result or a refusal).
 */
function scriptedModel(): MockLanguageModelV3 {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  const callTool = (toolCallId: string, toolName: string, input: unknown) => ({
    content: [{ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  });
  const say = (text: string) => ({
    content: [{ type: 'text' as const, text }],
    finishReason: { unified: 'stop' as const, raw: undefined },
    usage,
    warnings: [],
  });
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = new Map<string, unknown>();
      for (const message of prompt) {
        if (message.role !== 'tool') continue;
        for (const part of message.content) {
          if (part.type === 'tool-result' && part.output.type === 'json') results.set(part.toolName, part.output.value);
        }
      }
      if (!results.has('lookup_order')) return callTool('call_lookup', 'lookup_order', { order_id: 1042 });
      if (!results.has('refund_order')) {
        return callTool('call_refund', 'refund_order', { order_id: 1042, amount: 129.5, reason: 'never arrived' });
      }
      const refund = results.get('refund_order');
      if (isToolRefusal(refund)) return say(`I could not refund order 1042. ${refund.message}`);
      if (isEditedToolResult(refund)) {
        const { refunded, to } = refund.result as { refunded: number; to: string };
        return say(`Order 1042 is refunded: ${refunded} back to ${to}. (${refund.message})`);
      }
      return say('Order 1042 is refunded: 129.5 back to ada@example.com.');
    },
  });
}
