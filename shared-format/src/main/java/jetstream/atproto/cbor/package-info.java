/**
 * Strict DAG-CBOR (the atproto data model): an allocation-free reading cursor, a shortest-form writer,
 * the object-tree codec, the record data-model gate and UTF-8 validation.
 * May depend on {@code jetstream.atproto} and {@code .cid}.
 */
package jetstream.atproto.cbor;
