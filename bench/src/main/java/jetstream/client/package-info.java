/**
 * A benchmark placed in the client library's package so it can drive the package-private
 * {@code BlockDecoder} directly (bench module only; the library itself lives in module {@code client}).
 * May depend on the client library, {@code jetstream.segment}, {@code jetstream.planner}, {@code jetstream.bench}
 * (the shared vectors) and {@code jetstream.testing} (the RESULT line); nothing depends on it.
 */
package jetstream.client;
