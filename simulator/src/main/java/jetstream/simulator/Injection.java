package jetstream.simulator;

/**
 * A deliberately invalid item the simulator signed into an otherwise honest commit (fault knobs
 * {@code invalidRevEvery}, {@code invalidCollectionEvery}, {@code invalidRkeyEvery}); tests subtract
 * these from the ground truth when they compare it with what a validating consumer kept.
 *
 * @param seq the firehose event that carried it
 * @param kind {@code invalid_rev} (the whole commit; {@code path} null), {@code invalid_collection} or {@code invalid_rkey}
 * @param path the record's {@code collection/rkey}, or null for a whole-commit fault
 */
public record Injection(long seq, String did, String kind, String path) {}
