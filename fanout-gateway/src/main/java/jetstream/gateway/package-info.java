/**
 * The fanout-gateway: v1 {@code /subscribe} and v2 {@code subscribeEvents} WebSocket endpoints fed from the
 * ingester's readable-log feed into an in-memory ring, each event rendered and compressed once per wire;
 * cold replay from segment files for cursors below the ring; upgrade checks, subscriber limits and budgets.
 * May depend on shared-format ({@code feed}, {@code replay}, {@code filter}, {@code wire}, {@code ratelimit}) and service-common.
 */
package jetstream.gateway;
