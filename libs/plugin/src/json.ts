/** A JSON value, as google.protobuf.Value carries it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object, as google.protobuf.Struct carries it. */
export interface JsonObject {
  [key: string]: JsonValue;
}
