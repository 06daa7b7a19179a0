// The baseline for bench/webhook-delivery.ts, run as its own process (node
// --import tsx bench/lib/post-loop.ts '<json>'), as the service is: a plain
// undici POST loop, `concurrency` requests in flight over one keep-alive Agent
// of as many connections (keep-alive settings as in src/net/safe-client.ts),
// each reading the answer's body. TLS trusts NODE_EXTRA_CA_CERTS, as the service does. The
// first `warmup` posts open the connections and warm up the JIT; the rest are
// timed. Prints one line of JSON: PostLoopResult.
import { Agent, request } from 'undici';

export interface PostLoopInput {
  url: string;
  body: string;
  headers: Record<string, string>;
  concurrency: number;
  warmup: number;
  count: number;
}

export interface PostLoopResult {
  /** Wall seconds of the timed posts. */
  seconds: number;
  /** CPU seconds (user + system) this process used for the timed posts. */
  cpuSeconds: number;
  posts: number;
  non2xx: number;
}

async function postMany(agent: Agent, input: PostLoopInput, count: number): Promise<number> {
  let next = 0;
  let non2xx = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const response = await request(input.url, {
        dispatcher: agent,
        method: 'POST',
        headers: input.headers,
        body: input.body,
      });
      await response.body.text();
      if (response.statusCode < 200 || response.statusCode >= 300) non2xx++;
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, lane));
  return non2xx;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '') as PostLoopInput;
  const agent = new Agent({
    connections: input.concurrency,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
  });
  await postMany(agent, input, input.warmup);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const non2xx = await postMany(agent, input, input.count);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await agent.close();
  const result: PostLoopResult = { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, posts: input.count, non2xx };
  console.log(JSON.stringify(result));
}

await main();
