import secureJson from 'secure-json-parse';

/**
 * JSON text from outside parsed without __proto__ or constructor poisoning;
 * throws on invalid JSON. A poisoning key is refused, or with `'remove'`
 * dropped, for a sender whose text must never be refused for it (a signed
 * provider event, a Slack payload).
 */
export const parseJsonSafely = (text: string | Buffer, poisoning: 'error' | 'remove' = 'error'): unknown =>
  secureJson.parse(typeof text === 'string' ? text : text.toString('utf8'), undefined, {
    protoAction: poisoning,
    constructorAction: poisoning,
  });
