import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS_FILE, generateConfigDocs } from '../../scripts/generate-config-docs.js';
import { loadConfig, SETTINGS } from '../../src/config.js';

// docs/configuration.md is generated from src/config.ts: these fail while the
// page and the source differ, or the table and what loadConfig reads do.

describe('the configuration reference', () => {
  it('docs/configuration.md is what src/config.ts generates (run npm run generate:config-docs)', () => {
    expect(readFileSync(CONFIG_DOCS_FILE, 'utf8')).toBe(generateConfigDocs());
  });

  it('lists every variable loadConfig reads, and only those (besides Node’s own)', () => {
    const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/\b(?:read|value)\('([A-Z_]+)'\)/g)].map((match) => match[1]));
    const listed = Object.entries(SETTINGS)
      .filter(([, setting]) => !('readByNode' in setting))
      .map(([name]) => name);
    expect([...read].sort()).toEqual(listed.sort());
  });

  it('documents the defaults loadConfig applies', () => {
    const config = loadConfig({});
    expect(String(config.port)).toBe(SETTINGS.PORT.default);
    expect(config.host).toBe(SETTINGS.HOST.default);
    expect(config.maxWaitsPerKey).toBe(Number(SETTINGS.MAX_WAITS_PER_KEY.default));
    expect(config.retryScheduleMs.join(',')).toBe(SETTINGS.WEBHOOK_RETRY_SCHEDULE_MS.default);
    expect(config.webhookAllowedNetworks).toEqual([]);
  });
});
