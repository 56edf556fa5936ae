/**
 * The live firehose consumer: the relay connection, per-event application in upstream order (Sync 1.1
 * verification, replay ratchets, the validation gate), identity resolution, resyncs of pending repositories
 * and the verifier's per-DID state rows. May depend on {@code store}, {@code writer}, {@code backfill}
 * (the repository download path), {@code net} and the atproto packages.
 */
package jetstream.ingester.live;
