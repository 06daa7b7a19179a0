import Type from 'typebox';
import { ModeSchema, Timestamp } from '../../http/schemas.js';

export const Credentials = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Type.String({ minLength: 10, maxLength: 128 }),
  },
  { additionalProperties: false },
);

export const DeveloperSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  created_at: Timestamp,
});

export const KeySummarySchema = Type.Object({
  mode: ModeSchema,
  prefix: Type.String({ description: 'Shown for recognition; the full key is never stored.' }),
  created_at: Timestamp,
});

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
