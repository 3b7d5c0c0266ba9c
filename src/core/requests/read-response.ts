import { ApiError } from '../../errors/ApiError.js';
import type { ErrorContext } from '../../errors/ChannelError.js';
import { HttpError } from '../../errors/HttpError.js';
import { ResponseError, type SchemaIssue } from '../../errors/ResponseError.js';
import { envelopeText, isEnvelope } from '../../shared/envelope.js';
import { messageOf } from '../../shared/message.js';
import type { Redactor } from '../redactor.js';
import type { StandardSchemaV1 } from '../standard-schema.js';
import type { TransportResponse } from '../types.js';
import type { Call } from './call.js';

const unparsed = {};

function parse(text: string): unknown {
  if (/^\s*$/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return unparsed;
  }
}

/** A final response, the call it answers (its `raw`, `schema` and context) and the client's redactor. */
export interface ResponseToRead {
  response: TransportResponse;
  call: Pick<Call, 'raw' | 'schema' | 'context'>;
  redact: Redactor;
}

/**
 * Turns a final response into the value the call resolves to (a promise of it when the call's
 * schema validates it), or the error it rejects with. Whatever an error keeps of the body is
 * redacted first (then cut to length).
 */
export function readResponse({ response, call, redact }: ResponseToRead): unknown {
  const value = envelopeData(response, call.raw, call.context, redact);
  return call.schema ? validate(call.schema, value, response.status, call.context, redact) : value;
}

/** The envelope's `data` (or, with `raw: true`, the body as it came), or the error the answer is. */
function envelopeData(response: TransportResponse, raw: boolean, context: ErrorContext, redact: Redactor): unknown {
  const { status, body } = response;
  const value = parse(body);
  const ok = status >= 200 && status < 300;
  if (!raw && isEnvelope(value) && value.code !== 0 && value.code !== '0') {
    const text = envelopeText(value);
    const apiCode = value.code as number | string;
    throw new ApiError(
      'the service answered code ' + String(apiCode) + (text ? ': ' + redact.text(text) : '') + ' (HTTP ' + status + ')',
      Object.assign(
        {
          status,
          apiCode,
          body: redact.value(value),
        },
        context,
      ),
    );
  }
  if (!ok) {
    throw new HttpError(
      'HTTP ' + status + ' from ' + context.method + ' ' + context.url,
      Object.assign(
        {
          status,
          body: redact.text(body).slice(0, 1000),
        },
        context,
      ),
    );
  }
  // 204, HEAD, or any empty 2xx body: nothing to unwrap.
  if (value === undefined) return undefined;
  if (value === unparsed) {
    throw new ResponseError('the response body is not JSON (HTTP ' + status + '); expected { "code": 0, "data": ... }', Object.assign({ status }, context));
  }
  if (raw) return value;
  if (!isEnvelope(value)) {
    throw new ResponseError(
      'the response is not a { "code": 0, "data": ... } envelope; pass raw: true for endpoints that answer without one',
      Object.assign(
        {
          status,
        },
        context,
      ),
    );
  }
  return value.data;
}

/**
 * Validates with a Standard Schema; issues become a readable ResponseError. What the schema says
 * is redacted: its messages may quote the data (valibot's do), and the data may echo the token.
 */
async function validate<T>(schema: StandardSchemaV1<unknown, T>, data: unknown, status: number, context: ErrorContext, redact: Redactor): Promise<T> {
  let result: StandardSchemaV1.Result<T>;
  try {
    result = await schema['~standard'].validate(data);
  } catch (error) {
    throw new ResponseError(
      'the schema threw instead of returning issues: ' + redact.text(messageOf(error)),
      Object.assign({ status, cause: redact.cause(error) }, context),
    );
  }
  if (!result.issues) return result.value;
  const issues = redact.value(
    result.issues.map((issue) => ({
      message: issue.message,
      path: issue.path && issue.path.map((segment) => (typeof segment === 'object' ? segment.key : segment)),
    })),
  ) as SchemaIssue[];
  const list = issues.map((issue) => (issue.path && issue.path.length ? issue.path.join('.') + ': ' : '') + issue.message).join('; ');
  throw new ResponseError('the response data does not match the schema: ' + list, Object.assign({ status, issues }, context));
}
