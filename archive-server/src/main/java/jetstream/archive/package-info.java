/**
 * The archive-server: the public XRPC listener over the sealed segments ({@code getSegment}, {@code getBlock},
 * {@code planSnapshot}, the manifest), conditional and range serving, origin rate limits, and the status page
 * built from the ingester's feed and the gateways' stats files. Never opens RocksDB and never writes segments.
 * May depend on shared-format ({@code segment}, {@code planner}, {@code feed}, {@code ratelimit}, ...) and service-common.
 */
package jetstream.archive;
