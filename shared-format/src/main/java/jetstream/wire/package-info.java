/**
 * The stream wires' event JSON: v1 {@code /subscribe} events and v2 {@code subscribeEvents} frames,
 * rendered from a stored row ({@link jetstream.wire.WireEvent}) into reusable buffers, once per event.
 * May depend on {@code jetstream.atproto} ({@code cbor}, {@code cid}, {@code json}, {@code firehose}).
 */
package jetstream.wire;
