import { ApiError } from '../errors/ApiError.js';
import type { ErrorContext } from '../errors/ChannelError.js';
import { HttpError } from '../errors/HttpError.js';
import { ResponseError, type SchemaIssue } from '../errors/ResponseError.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { TransportResponse } from './types.js';

const unparsed = {};

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return unparsed;
  }
}

function isEnvelope(value: unknown): value is { code: unknown; data?: unknown; message?: unknown; msg?: unknown } {
  return typeof value === 'object' && value !== null && 'code' in value;
}

/**
 * Turns a final response into the value the call resolves to, or the error it rejects with.
 * `token` is only used to cut it out of any body text kept on an error.
 */
export function readResponse(
  response: TransportResponse,
  raw: boolean,
  context: ErrorContext,
  token: string,
): unknown {
  const { status, body } = response;
  const value = parse(body);
  const ok = status >= 200 && status < 300;
  if (!raw && isEnvelope(value) && value.code !== 0 && value.code !== '0') {
    const text = typeof value.message === 'string' ? value.message : typeof value.msg === 'string' ? value.msg : '';
    const apiCode = value.code as number | string;
    throw new ApiError('the service answered code ' + String(apiCode) + (text ? ': ' + redact(text, token) : '') + ' (HTTP ' + status + ')', Object.assign({
      status,
      apiCode,
      body: value,
    }, context));
  }
  if (!ok) {
    throw new HttpError('HTTP ' + status + ' from ' + context.method + ' ' + context.url, Object.assign({
      status,
      body: redact(body.slice(0, 1000), token),
    }, context));
  }
  if (value === unparsed || (!raw && value === undefined)) {
    throw new ResponseError('the response body is not JSON (HTTP ' + status + '); expected { "code": 0, "data": ... }', Object.assign({ status }, context));
  }
  if (raw) return value;
  if (!isEnvelope(value)) {
    throw new ResponseError('the response is not a { "code": 0, "data": ... } envelope; pass raw: true for endpoints that answer without one', Object.assign({
      status,
    }, context));
  }
  return value.data;
}

/** Validates with a Standard Schema; issues become a readable ResponseError. */
export async function validate<T>(schema: StandardSchemaV1<unknown, T>, data: unknown, status: number, context: ErrorContext): Promise<T> {
  const result = await schema['~standard'].validate(data);
  if (!result.issues) return result.value;
  const issues: SchemaIssue[] = result.issues.map((issue) => ({
    message: issue.message,
    path: issue.path && issue.path.map((segment) => (typeof segment === 'object' ? segment.key : segment)),
  }));
  const list = issues.map((issue) => (issue.path && issue.path.length ? issue.path.join('.') + ': ' : '') + issue.message).join('; ');
  throw new ResponseError('the response data does not match the schema: ' + list, Object.assign({ status, issues }, context));
}

export function redact(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}
