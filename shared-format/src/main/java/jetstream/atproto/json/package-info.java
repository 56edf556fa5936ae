/**
 * atproto JSON: DAG-CBOR transcoded straight to the JSON Jetstream emits, a reusable buffer with Go's
 * {@code encoding/json} escaping, and JSON parsed back into the data model (for the timestamp importer and
 * tests). May depend on {@code jetstream.atproto}, {@code .cid}, {@code .cbor} and Jackson.
 */
package jetstream.atproto.json;
