import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../domain/passwords.js';
import type { ApiError } from '../errors.js';

// Reading the console's forms (application/x-www-form-urlencoded, parsed by
// @fastify/formbody): one text value per field, never a repeated one.

export function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The sentence to show for a refused form, from the API's error. */
export function formMessage(error: ApiError): string {
  if (error.code === 'invalid_request') {
    const fields = (error.details?.fields as Array<{ field: string }> | undefined) ?? [];
    const names = new Set(fields.map((f) => f.field));
    const parts: string[] = [];
    if (names.has('email')) parts.push('Enter a valid email address.');
    if (names.has('password'))
      parts.push(`The password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long.`);
    if (parts.length > 0) return parts.join(' ');
  }
  return error.message;
}
