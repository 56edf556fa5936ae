/**
 * CAR v1 files (repository exports, firehose commit diffs): {@link jetstream.atproto.car.CarReader} checks
 * every block against its CID with bounded memory; {@link jetstream.atproto.car.CarWriter} writes them.
 * May depend on {@code jetstream.atproto}, {@code .cid} and {@code .cbor}.
 */
package jetstream.atproto.car;
