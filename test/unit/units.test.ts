import { expect, it } from 'vitest';
import {
  DEFAULT_EXPIRY_SECONDS,
  MAX_EXPIRY_SECONDS,
  MAX_METADATA_BYTES,
  MIN_EXPIRY_SECONDS,
} from '../../src/domain/pause.js';
import { formatBytes, formatSeconds } from '../../src/domain/units.js';
import { MAX_TOOL_WAIT_SECONDS } from '../../src/mcp/tools.js';

it('says a number of seconds in the largest unit it is a whole number of, a single day as 24 hours', () => {
  expect(formatSeconds(1)).toBe('1 second');
  expect(formatSeconds(90)).toBe('90 seconds');
  expect(formatSeconds(120)).toBe('2 minutes');
  expect(formatSeconds(3600)).toBe('1 hour');
  expect(formatSeconds(86_400)).toBe('24 hours');
  expect(formatSeconds(2 * 86_400)).toBe('2 days');
  expect(formatSeconds(90_000)).toBe('25 hours');
  expect(formatSeconds(0)).toBe('0 seconds');
});

it('says a size in the largest binary unit it is a whole number of', () => {
  expect(formatBytes(16 * 1024)).toBe('16 KiB');
  expect(formatBytes(1024 * 1024)).toBe('1 MiB');
  expect(formatBytes(1536)).toBe('1,536 bytes');
  expect(formatBytes(1)).toBe('1 byte');
});

it('speaks the limits in the words the API, MCP and the docs have always used', () => {
  expect(formatSeconds(MIN_EXPIRY_SECONDS)).toBe('1 second');
  expect(formatSeconds(MAX_EXPIRY_SECONDS)).toBe('30 days');
  expect(formatSeconds(DEFAULT_EXPIRY_SECONDS)).toBe('24 hours');
  expect(formatSeconds(MAX_TOOL_WAIT_SECONDS)).toBe('55 seconds');
  expect(formatBytes(MAX_METADATA_BYTES)).toBe('16 KiB');
});
