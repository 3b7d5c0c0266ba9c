import { ChannelError, type ErrorContext } from './ChannelError.js';

/** One problem found by a `schema`. */
export interface SchemaIssue {
  readonly message: string;
  /** Where in `data` the problem is, e.g. `['shipments', 0, 'tracking_no']`. */
  readonly path?: ReadonlyArray<PropertyKey>;
}

/** A 2xx response that cannot be used: a body that is not JSON, not an envelope, or that `schema` rejected. */
export class ResponseError extends ChannelError {
  override readonly name = 'ResponseError';
  override readonly code = 'RESPONSE_ERROR' as const;
  /** HTTP status of the response. */
  readonly status: number;
  /** The schema's issues, when a `schema` rejected the data. */
  readonly issues?: ReadonlyArray<SchemaIssue>;

  constructor(message: string, context: ErrorContext & { status: number; issues?: ReadonlyArray<SchemaIssue> }) {
    super(message, context);
    this.status = context.status;
    if (context.issues) this.issues = context.issues;
  }
}
