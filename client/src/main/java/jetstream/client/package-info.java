/**
 * The client library (plain Java, no framework): {@link jetstream.client.Jetstream#subscribe} gives a filtered,
 * seq-ordered stream that sweeps the archive (planSnapshot pages, parallel ranged downloads under a byte budget)
 * and then follows the live v2 tail. May depend on shared-format ({@code segment}, {@code planner}, {@code wire},
 * {@code atproto}), Jackson and zstd-jni; never on the CLI or a service module.
 */
package jetstream.client;
