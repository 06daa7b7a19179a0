// @pausepoint/sdk: pause a program until a human answers.
export {
  type AskOptions,
  type CreatePauseOptions,
  DEFAULT_BASE_URL,
  Events,
  formOutcome,
  type GetPauseOptions,
  type ListenOptions,
  outcomeOf,
  Pausepoint,
  type PausepointOptions,
  Pauses,
  type RequestOptions,
  type WaitForOptions,
  Webhooks,
} from './client.js';
export {
  type FieldProblem,
  FormValuesError,
  PausepointConnectionError,
  PausepointError,
  type PausepointErrorFields,
  WaitTimeoutError,
  WebhookVerificationError,
} from './errors.js';
export {
  type JsonSchema,
  type JsonSchemaForm,
  jsonSchemaOf,
  type PauseParamsWithForm,
  parseFormValues,
  type StandardSchemaForm,
} from './forms.js';
export type { paths as OpenApiPaths } from './generated/openapi.js';
export { AutoPaginator } from './pagination.js';
export type {
  StandardInput,
  StandardIssue,
  StandardJsonSchemaOptions,
  StandardOutput,
  StandardResult,
  StandardSchemaWithJson,
} from './standard-schema.js';
export type { Fetch } from './transport.js';
export * from './types.js';
export {
  parseWebhookEvent,
  type RawBody,
  type SignatureHeader,
  signWebhookPayload,
  standardSignature,
  type VerifyOptions,
  verifyWebhookSignature,
  WEBHOOK_HEADERS,
  type WebhookHeaders,
} from './webhooks.js';
