package jetstream.gateway;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * Transport settings of a subscription's connection, applied by the upgrade filter before the upgrade.
 *
 * <p>Subscribers write a whole batch in one event-loop task and flush once ({@link ChannelSink}), but
 * Vert.x's own writes (pings, close frames) flush each time; {@link #consolidateFlushes} lets Netty
 * coalesce flushes outside a read into one socket write per task (at most {@link #FLUSH_EVERY} per write).
 */
final class TextFrames {
    /** Frames written before a flush is forced even within one task (Netty's default). */
    static final int FLUSH_EVERY = 256;
    private static final String CONSOLIDATION = "jetstream-flush-consolidation";

    private TextFrames() {}

    /**
     * Installs flush consolidation on the connection of a request about to be upgraded (the filter
     * calls it once the subscription is accepted). Outbound bytes and their order are unchanged; only
     * the number of socket writes drops: a flush requested outside a read is deferred to the end of
     * the running event-loop task (or forced every {@link #FLUSH_EVERY} flushes); a close flushes
     * pending frames first.
     */
    static void consolidateFlushes(HttpConnection connection) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline p = base.channel().pipeline();
            if (p.get(CONSOLIDATION) == null) {
                p.addFirst(CONSOLIDATION, new FlushConsolidationHandler(FLUSH_EVERY, true));
            }
        }
    }

    /** Vert.x's name for Netty's extension handler (added when per-message compression is supported). */
    static final String EXTENSION_HANDLER = "webSocketExtensionHandler";

    /**
     * Declines every WebSocket extension offered on the connection of a request about to be upgraded:
     * the handler that would answer a permessage-deflate offer is taken out of the pipeline, so the
     * 101 carries no {@code Sec-WebSocket-Extensions} and frames stay uncompressed. The handler sits
     * in front of every route (it read the offer before any filter ran), so this is the only
     * per-request way to decline.
     */
    static void declineExtensions(HttpConnection connection) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline p = base.channel().pipeline();
            if (p.get(EXTENSION_HANDLER) != null) {
                p.remove(EXTENSION_HANDLER);
            }
        }
    }
}
