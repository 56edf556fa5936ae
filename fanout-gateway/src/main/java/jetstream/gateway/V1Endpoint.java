package jetstream.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

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
import jetstream.filter.FilterException;
import jetstream.filter.V1Params;
import jetstream.ratelimit.TokenBucket;

/** The wire-frozen v1 {@code /subscribe} (docs/wire.md: v1), with {@code options_update} and {@code requireHello}. */
@WebSocket(path = UpgradeFilter.V1_PATH)
public class V1Endpoint {
    private static final Logger LOG = Logger.getLogger(V1Endpoint.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final int CLOSE_REASON_BYTES = 123;
    /**
     * Client messages (options_update) one connection may send: a burst, then this many per second.
     * Each is parsed on the event loop (up to the 1 MiB message cap), so a client cannot keep it busy.
     */
    static final int MESSAGES_PER_SECOND = 1;
    static final int MESSAGES_BURST = 5;
    private static final io.quarkus.websockets.next.UserData.TypedKey<TokenBucket> MESSAGES =
            new io.quarkus.websockets.next.UserData.TypedKey<>("client-messages");
    /** RFC 6455 1013: the server is overloaded; the client may reconnect later. */
    static final int TRY_AGAIN_LATER = 1013;

    @Inject
    Gateway gateway;
    @Inject
    Vertx vertx;

    @OnOpen
    @NonBlocking
    void open(WebSocketConnection c) {
        Connections.open(gateway, c, vertx);
    }

    @OnBinaryMessage
    @NonBlocking
    void binary(WebSocketConnection c, Buffer message) {
        // Binary client messages are ignored on v1.
    }

    @OnTextMessage
    @NonBlocking
    void text(WebSocketConnection c, String message) {
        Subscriber s = c.userData().get(Connections.KEY);
        if (s == null) {
            return;
        }
        TokenBucket messages = c.userData().get(MESSAGES);
        if (messages == null) {
            messages = new TokenBucket(MESSAGES_PER_SECOND, MESSAGES_BURST, System.nanoTime());
            c.userData().put(MESSAGES, messages);
        }
        if (messages.tryAcquire(System.nanoTime()) > 0) {
            gateway.metrics().optionsUpdateError("rate_limited");
            s.close(1008, "too many client messages: at most " + MESSAGES_BURST + " at once, then "
                    + MESSAGES_PER_SECOND + " per second");
            return;
        }
        JsonNode env;
        try {
            env = JSON.readTree(message);
        } catch (Exception e) {
            env = null;
        }
        if (env == null || !env.isObject()) {
            gateway.metrics().optionsUpdateError("bad_envelope_json");
            s.close(1007, "bad SubscriberSourcedMessage envelope");
            return;
        }
        JsonNode type = env.get("type");
        if (type == null || !"options_update".equals(type.asText())) {
            LOG.debugf("ignoring subscriber message of type %s", type);
            return;
        }
        Subscriber.Options opts;
        try {
            opts = options(env.get("payload"));
        } catch (BadPayload e) {
            gateway.metrics().optionsUpdateError("bad_payload_json");
            s.close(1007, "bad options_update payload");
            return;
        } catch (FilterException e) {
            gateway.metrics().optionsUpdateError("invalid_options");
            s.close(1008, truncate(e.getMessage(), CLOSE_REASON_BYTES));
            return;
        }
        Gateway.Prepared held = c.userData().get(Connections.HELD);
        if (held != null && !held.state().resize(StateFootprint.subscription(opts.filter(),
                c.handshakeRequest().query()))) {
            gateway.metrics().stateRefused.increment();
            gateway.metrics().optionsUpdateError("state_budget");
            s.close(TRY_AGAIN_LATER, "subscription memory budget spent; retry later");
            return;
        }
        gateway.metrics().optionsUpdates.increment();
        s.update(opts);
        Gateway.Prepared p = c.userData().get(Connections.PLAN);
        if (p != null && !s.started()) {
            c.userData().remove(Connections.PLAN);
            s.start(p.plan().live(), p.plan().startSeq(), null);
        }
    }

    private static final class BadPayload extends Exception {
        BadPayload() {
            super(null, null, false, false);
        }
    }

    /** The payload's fields; omitted ones mean match-all / no limit; a negative size cap is 0. */
    static Subscriber.Options options(JsonNode payload) throws BadPayload {
        if (payload == null || payload.isNull()) {
            return new Subscriber.Options(V1Params.filter(null, null), 0);
        }
        if (!payload.isObject()) {
            throw new BadPayload();
        }
        List<String> collections = strings(payload.get("wantedCollections"));
        List<String> dids = strings(payload.get("wantedDids"));
        long max = 0;
        JsonNode m = payload.get("maxMessageSizeBytes");
        if (m != null && !m.isNull()) {
            if (!m.isIntegralNumber()) {
                throw new BadPayload();
            }
            max = Math.max(0, m.asLong());
        }
        return new Subscriber.Options(V1Params.filter(collections, dids), max);
    }

    private static List<String> strings(JsonNode n) throws BadPayload {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isArray()) {
            throw new BadPayload();
        }
        List<String> out = new ArrayList<>(n.size());
        for (JsonNode v : n) {
            if (!v.isTextual()) {
                throw new BadPayload();
            }
            out.add(v.asText());
        }
        return out;
    }

    /** Truncates to at most {@code max} UTF-8 bytes on a character boundary, marking a cut with "...". */
    static String truncate(String s, int max) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= max) {
            return s;
        }
        int budget = max - 3;
        StringBuilder out = new StringBuilder();
        int used = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (used + n > budget) {
                break;
            }
            out.appendCodePoint(cp);
            used += n;
            i += Character.charCount(cp);
        }
        return out.append("...").toString();
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
