/**
 * The ingester process: its settings, its meters and {@link jetstream.ingester.IngesterCore}, which wires the
 * metadata store, the writers, the feed server and the lifecycle phase machine (framework-free, so tests run it
 * as a child JVM); the Quarkus service and readiness around it. May depend on every ingester sub-package;
 * they use only {@link jetstream.ingester.IngestMetrics} from here (and {@code phase} the core's backfill factory interface).
 */
package jetstream.ingester;
