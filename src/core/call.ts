import type { CallKind } from './platform.js';
import type { RetryPolicy } from './retry.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { FileSpec, Progress, SignalLike } from './types.js';

/** Everything a call needs, checked: built once, before a token is asked for or anything is sent. */
export interface Call {
  kind: CallKind;
  method: string;
  url: string;
  context: { method: string; url: string };
  headers: Record<string, string>;
  body?: string;
  raw: boolean;
  schema?: StandardSchemaV1<unknown, unknown>;
  given?: SignalLike;
  timeout: number;
  policy: RetryPolicy;
  file?: FileSpec;
  onProgress?: (progress: Progress) => void;
  hostOptions?: Record<string, unknown>;
}
