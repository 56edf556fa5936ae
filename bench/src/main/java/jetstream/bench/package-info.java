/**
 * Benchmarks (module {@code bench}, profile {@code -Pbench}; see BENCHMARKS.md): JMH and stand-alone harnesses,
 * each measured against a floor in the same run. May depend on every module; nothing depends on it.
 */
package jetstream.bench;
