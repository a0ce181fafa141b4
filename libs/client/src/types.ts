import type { Paths } from './generated';

/** The path of an operation, e.g. `/identity/v2/project-group/create`. */
export type OperationPath = keyof Paths & string;

type Post<P extends OperationPath> = Paths[P] extends { post: infer O } ? O : never;
type Json<C> = C extends { content: { 'application/json': infer J } } ? J : undefined;

/** The request body of an operation, as its OpenAPI document declares it. */
export type RequestOf<P extends OperationPath> = Post<P> extends { requestBody: infer R } ? Json<R> : Post<P> extends { requestBody?: infer R } ? Json<R> | undefined : never;

type Success = 200 | 201 | 202 | 204;
/**
 * The answer of an operation, from its declared success responses: typed as soon as the documents
 * declare response schemas (a bare object is `Record<string, unknown>`); `undefined` for a 204.
 */
export type ResponseOf<P extends OperationPath> = Post<P> extends { responses: infer R } ? { [C in keyof R & Success]: Json<R[C]> }[keyof R & Success] : never;

/** The error envelope every failure carries. */
export interface ErrorEnvelope {
  error: { code: string; message: string; status: number; [key: string]: unknown };
}
