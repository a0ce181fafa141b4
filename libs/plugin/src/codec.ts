import { Reader, type Type } from 'protobufjs';
import { Decoder } from './decoder';
import { Encoder } from './encoder';
import { DecodeError, EMPTY, planOf, type MessagePlan } from './wire';

export { DecodeError, EncodeError } from './wire';

/**
 * Messages to and from bytes, driven by the protocol's descriptor (protobufjs parses it; this codec
 * reads the wire with protobufjs' Reader and writes it itself). Own code rather than
 * protobufjs' generated decoders because a plugin's answer is untrusted input:
 * - google.protobuf.Struct / ListValue / Value are plain JSON both ways (null, nested lists, numbers);
 *   a Struct key is always an own data property, `__proto__` included (protobufjs assigns map keys,
 *   which turns `__proto__` into a prototype change), the way JSON.parse makes it;
 * - nesting deeper than `maxDepth` is refused before recursing (no stack overflow, whatever the bytes);
 * - a known field with the wrong wire type, a truncated message or an invalid length is an error naming
 *   the field; fields this protocol version does not know are skipped (as protobuf does).
 * Decoded messages carry every field (proto3's defaults; a Struct {}, a list []), enums by name (the
 * number when unknown), a message field only when sent. A Struct number that is not finite (NaN,
 * Infinity: JSON has none) decodes as null, as JSON.stringify writes it.
 */

export interface CodecLimits {
  /** Struct / ListValue nesting (the message's own level is 1). */
  maxDepth: number;
}

/** Encodes and decodes one message type. */
export class MessageCodec<Decoded, Input> {
  private readonly plan: MessagePlan;
  private readonly decoder: Decoder;
  private readonly encoder: Encoder;
  readonly isEmpty: boolean;

  constructor(type: Type, limits: CodecLimits) {
    this.plan = planOf(type);
    this.decoder = new Decoder(limits.maxDepth);
    this.encoder = new Encoder(limits.maxDepth);
    this.isEmpty = type.fullName === EMPTY;
  }

  get typeName(): string {
    return this.plan.name;
  }

  /** The message's bytes; an EncodeError names the field that cannot be sent. */
  encode(value: Input): Buffer {
    return this.encoder.encode(this.plan, value ?? {});
  }

  /** The message of these bytes; a DecodeError says what is wrong with them. */
  decode(bytes: Uint8Array): Decoded {
    const r = Reader.create(bytes);
    try {
      return this.decoder.message(r, r.len, this.plan, 1) as Decoded;
    } catch (e) {
      if (e instanceof DecodeError) throw e;
      // protobufjs' Reader: "index out of range", "invalid wire type", "maximum nesting depth exceeded"
      throw new DecodeError('', (e as Error)?.message ?? String(e));
    }
  }
}
