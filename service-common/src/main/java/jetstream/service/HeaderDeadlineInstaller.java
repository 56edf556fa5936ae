package jetstream.service;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.quarkus.runtime.Quarkus;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.quarkus.vertx.http.HttpServerStart;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.HttpServerImpl;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.net.impl.ServerID;
import io.vertx.core.net.impl.TCPServerBase;

/**
 * Puts a {@link HeaderDeadline} on every connection of the public listener (not the management interface). Neither
 * Quarkus 3.33 nor Vert.x 4.5 has a request-header deadline or a hook that sees a connection before its first
 * request (HttpServerOptionsCustomizer only sets options; Quarkus never hands out the Vert.x HttpServer, whose
 * connection handler it sets only for its max-connections counter), so once the listener is bound this adds an accept handler to its Netty server channel,
 * which puts the deadline first in each accepted channel. The server channel is the one private field read here
 * ({@code TCPServerBase.bindFuture}); if a Vert.x upgrade renames it the service stops (exit 1) rather than run
 * without the deadline. Connections accepted before the bind event is observed (the first milliseconds) have none.
 */
@ApplicationScoped
public class HeaderDeadlineInstaller implements HttpServerOptionsCustomizer {
    /** The reference's {@code ReadHeaderTimeout}. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Logger LOG = Logger.getLogger(HeaderDeadlineInstaller.class);

    @Inject
    Vertx vertx;
    /** What a service adds to each public connection besides the deadline (e.g. the gateway's head budget). */
    @Inject
    jakarta.enterprise.inject.Instance<PublicChannelInitializer> initializers;

    private final CompletableFuture<Void> installed = new CompletableFuture<>();

    /**
     * No h2c on the public listener: with it Vert.x adds the HTTP/1 decoder only after the first bytes, too late for
     * the deadline to watch the first request. The front door and every client of ours speak HTTP/1.1 to it.
     */
    @Override
    public void customizeHttpServer(HttpServerOptions options) {
        options.setHttp2ClearTextEnabled(false);
    }

    void onBound(@ObservesAsync HttpServerStart start) {
        try {
            List<Channel> channels = publicServerChannels(start.options().getPort());
            if (channels.isEmpty()) {
                throw new IllegalStateException("no bound Vert.x server for port " + start.options().getPort());
            }
            for (Channel ch : channels) {
                if (ch.pipeline().get(Acceptor.class) == null) {
                    ch.pipeline().addFirst(HeaderDeadline.NAME, new Acceptor(TIMEOUT.toNanos(),
                            initializers.stream().toList()));
                }
            }
            installed.complete(null);
        } catch (RuntimeException | ReflectiveOperationException e) {
            installed.completeExceptionally(e);
            LOG.error("cannot install the request-header deadline on the public listener; stopping", e);
            Quarkus.asyncExit(1);
        }
    }

    /** Completes once every public connection accepted from then on gets the deadline. */
    public CompletableFuture<Void> installed() {
        return installed;
    }

    private List<Channel> publicServerChannels(int configuredPort) throws ReflectiveOperationException {
        // Vert.x keys a listener by the port it was asked for (negative: Quarkus' shared random port).
        Field bind = TCPServerBase.class.getDeclaredField("bindFuture");
        bind.setAccessible(true);
        List<Channel> out = new ArrayList<>();
        Map<ServerID, HttpServerImpl> servers = ((VertxInternal) vertx).sharedHttpServers();
        synchronized (servers) {
            for (Map.Entry<ServerID, HttpServerImpl> e : servers.entrySet()) {
                if (e.getKey().port == configuredPort) {
                    io.vertx.core.Future<?> f = (io.vertx.core.Future<?>) bind.get(e.getValue());
                    if (f != null && f.succeeded() && f.result() instanceof Channel ch) {
                        out.add(ch);
                    }
                }
            }
        }
        return out;
    }

    /**
     * On the server channel: each accepted connection gets its own deadline, then the service's initializers run,
     * all before Vert.x configures it.
     */
    @ChannelHandler.Sharable
    static final class Acceptor extends ChannelInboundHandlerAdapter {
        private final long timeoutNanos;
        private final List<PublicChannelInitializer> initializers;

        Acceptor(long timeoutNanos, List<PublicChannelInitializer> initializers) {
            this.timeoutNanos = timeoutNanos;
            this.initializers = initializers;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Channel child) {
                child.pipeline().addFirst(HeaderDeadline.NAME, new HeaderDeadline(timeoutNanos));
                for (PublicChannelInitializer i : initializers) {
                    i.accepted(child);
                }
            }
            ctx.fireChannelRead(msg);
        }
    }
}
