import Type from 'typebox';

// Field types that the actions' input schemas share with the API's responses
// (http/schemas.ts re-exports them for the routes).

/** A moment in time, as the API reads and writes it. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
