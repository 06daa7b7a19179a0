import Type from 'typebox';
import { ModeSchema, Timestamp } from '../../http/schemas.js';

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
