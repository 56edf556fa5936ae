/**
 * atproto building blocks shared by every process, split into sub-packages by layer (syntax, cid, cbor,
 * car, json, crypto, mst, sync, firehose). This package holds only {@link jetstream.atproto.DecodeException},
 * the one error for malformed upstream or client bytes: callers drop the input and count its reason.
 * Depends on the JDK only.
 */
package jetstream.atproto;
