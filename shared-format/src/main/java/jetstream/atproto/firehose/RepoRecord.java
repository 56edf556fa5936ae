package jetstream.atproto.firehose;

/**
 * One record of a repository as a backfill walk or a verifier resync yields it: its MST key
 * {@code collection/rkey} and its DAG-CBOR block, or a null block when the block could not be found.
 */
public record RepoRecord(String key, ByteSlice block) {}
