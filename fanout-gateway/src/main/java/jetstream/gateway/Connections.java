package jetstream.gateway;

import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/** Binds a {@link Subscriber} to a websockets-next connection. */
final class Connections {
    private Connections() {}

    /** Opens the subscriber prepared by the upgrade filter; closes 1011 if the preparation is missing. */
    static Subscriber open(Gateway gateway, WebSocketConnection c, Vertx vertx) {
        Gateway.Prepared p = gateway.take(c.handshakeRequest().header(Gateway.PREPARED_HEADER));
        if (p == null) {
            c.close(new CloseReason(1011, "subscription was not prepared")).subscribe().with(v -> { }, t -> { });
            return null;
        }
        Context ctx = Vertx.currentContext() != null ? Vertx.currentContext() : vertx.getOrCreateContext();
        SubscriberSink sink = ChannelSink.attach(c, ctx, p.deflate(), gateway.settings().queuedByteCap());
        Subscriber s = new Subscriber(p.wire(), p.zstd(), p.deflate(), p.options(), gateway.ring(), gateway.cold(),
                sink, gateway.metrics(), gateway.settings(), System::nanoTime);
        gateway.register(s);
        c.userData().put(KEY, s);
        c.userData().put(HELD, p);
        if (!p.requireHello()) {
            s.start(p.plan().live(), p.plan().startSeq(), p.info());
        } else {
            c.userData().put(PLAN, p);
        }
        return s;
    }

    /**
     * For an upgrade paused while its cursor resolves: a client may leave meanwhile, and what it holds
     * must come back then, not at the sweep's 30 s expiry of unused preparations. The answer tells
     * whether the connection is gone (nothing should be admitted); a preparation already stashed for
     * it is taken back and released when it closes before the upgrade took it.
     */
    static java.util.function.BooleanSupplier releaseIfGone(Gateway gateway, io.vertx.ext.web.RoutingContext rc) {
        java.util.concurrent.atomic.AtomicBoolean gone = new java.util.concurrent.atomic.AtomicBoolean();
        rc.response().closeHandler(v -> {
            gone.set(true);
            Gateway.Prepared p = gateway.take(rc.request().headers().get(Gateway.PREPARED_HEADER));
            if (p != null) {
                p.release();
            }
        });
        return () -> gone.get() || rc.response().closed();
    }

    static final io.quarkus.websockets.next.UserData.TypedKey<Subscriber> KEY =
            new io.quarkus.websockets.next.UserData.TypedKey<>("subscriber");
    /** The prepared subscription whose subscriber slot and state bytes the connection holds until it closes. */
    static final io.quarkus.websockets.next.UserData.TypedKey<Gateway.Prepared> HELD =
            new io.quarkus.websockets.next.UserData.TypedKey<>("held");
    static final io.quarkus.websockets.next.UserData.TypedKey<Gateway.Prepared> PLAN =
            new io.quarkus.websockets.next.UserData.TypedKey<>("plan");

    /** A pong from the client: the keep-alive ping was answered. */
    static void pong(WebSocketConnection c) {
        Subscriber s = c.userData().get(KEY);
        if (s != null) {
            s.pong();
        }
    }

    static void closed(Gateway gateway, WebSocketConnection c) {
        Gateway.Prepared held = c.userData().get(HELD);
        if (held != null) {
            held.release();
        }
        Subscriber s = c.userData().get(KEY);
        if (s != null) {
            s.closed();
            gateway.unregister(s);
            if (s.cleanlyClosed()) {
                gateway.metrics().cleanDisconnects.increment();
            }
        }
    }

    /** RFC 6455: a message too big to process. */
    static final int MESSAGE_TOO_BIG = 1009;

    /**
     * The error Vert.x raises when a client message outgrows {@code max-message-size} (its aggregator
     * refuses the frame) closes the connection with 1009; any other closes it with 1011.
     */
    static void tooBig(WebSocketConnection c, IllegalStateException e) {
        boolean big = e.getMessage() != null && e.getMessage().contains("max message size");
        if (!big) {
            org.jboss.logging.Logger.getLogger(Connections.class).error("unhandled connection error", e);
        }
        int code = big ? MESSAGE_TOO_BIG : 1011;
        String reason = big ? "client message too big" : "internal error";
        Subscriber s = c.userData().get(KEY);
        if (s != null) {
            s.close(code, reason);
        } else {
            c.close(new CloseReason(code, reason)).subscribe().with(v -> { }, t -> { });
        }
    }
}
