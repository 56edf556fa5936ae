/**
 * A benchmark placed in the client library's package so it can drive the package-private
 * {@code BlockDecoder} directly (bench module only; the library itself lives in module {@code client}).
 */
package jetstream.client;
