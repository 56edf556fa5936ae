/**
 * The relay's {@code subscribeRepos} frames and their conversion into archive rows: the frame decoder,
 * {@link jetstream.atproto.firehose.RowConverter} with the ingest validation gate (a refused input becomes
 * a {@link jetstream.atproto.firehose.Drop} with a metric reason), upstream seq-gap tracking and relay
 * frame capture files. May depend on {@code jetstream.atproto} and its {@code cid}, {@code cbor}, {@code car}
 * and {@code syntax} sub-packages.
 */
package jetstream.atproto.firehose;
