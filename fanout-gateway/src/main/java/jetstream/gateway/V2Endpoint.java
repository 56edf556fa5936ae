package jetstream.gateway;

import jakarta.inject.Inject;

import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnPongMessage;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.common.annotation.NonBlocking;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/** {@code subscribeEvents} (docs/wire.md: v2): server-push only; any client data frame closes with 1008. */
@WebSocket(path = UpgradeFilter.V2_PATH)
public class V2Endpoint {
    @Inject
    Gateway gateway;
    @Inject
    Vertx vertx;

    @OnOpen
    @NonBlocking
    void open(WebSocketConnection c) {
        Connections.open(gateway, c, vertx);
    }

    @OnTextMessage
    @NonBlocking
    void text(WebSocketConnection c, String message) {
        policyViolation(c);
    }

    @OnBinaryMessage
    @NonBlocking
    void binary(WebSocketConnection c, Buffer message) {
        policyViolation(c);
    }

    private void policyViolation(WebSocketConnection c) {
        Subscriber s = c.userData().get(Connections.KEY);
        if (s != null) {
            s.close(1008, "subscribeEvents is server-push only");
        } else {
            c.close(new CloseReason(1008, "subscribeEvents is server-push only")).subscribe().with(v -> { }, t -> { });
        }
    }

    /** A client message past the size cap (Vert.x refuses to aggregate it): close 1009, RFC 6455's "too big". */
    @OnError
    void error(WebSocketConnection c, IllegalStateException e) {
        Connections.tooBig(c, e);
    }

    @OnPongMessage
    @NonBlocking
    void pong(WebSocketConnection c, Buffer data) {
        Connections.pong(c);
    }

    @OnClose
    @NonBlocking
    void close(WebSocketConnection c) {
        Connections.closed(gateway, c);
    }
}
