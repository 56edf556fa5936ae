package jetstream.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * Entry point of the client library (plain Java, no framework): {@link #subscribe} a filtered,
 * ordered stream of archive-then-live events from a Jetstream v2 server (ours or the Go reference).
 *
 * <pre>{@code
 * try (JetstreamClient c = Jetstream.subscribe("localhost:8080",
 *         Options.builder().collections(List.of("app.bsky.feed.*")).afterSeq(0).build())) {
 *     for (Iterator<Batch> it = c.events(); it.hasNext(); ) {
 *         Batch b = it.next();
 *         b.events().forEach(fold::apply);
 *         saveCursor(b.lastCursor());
 *     }
 * }
 * }</pre>
 */
public final class Jetstream {
    private Jetstream() {}

    /**
     * Creates a client; nothing is requested until {@link JetstreamClient#events()} (or a stream or
     * publisher) is first used.
     *
     * @param host {@code host[:port]} or an http/https/ws/wss URL (normalized as docs/client.md: Entry points and options says)
     * @throws IllegalArgumentException for a bad host
     */
    public static JetstreamClient subscribe(String host, Options options) {
        return new JetstreamClient(XrpcCalls.normalizeHost(host), options, defaultHttp());
    }

    /**
     * The http or https base URI that {@code host} names, by the rules {@link #subscribe} applies (a bare
     * loopback host is http, any other bare host https; ws and wss map to http and https).
     *
     * @throws IllegalArgumentException for a bad host
     */
    public static URI baseUri(String host) {
        return XrpcCalls.normalizeHost(host);
    }

    /** As {@link #subscribe(String, Options)} with a caller-supplied HTTP client (used for every request). */
    public static JetstreamClient subscribe(String host, Options options, HttpClient http) {
        return new JetstreamClient(XrpcCalls.normalizeHost(host), options, http);
    }

    /**
     * Every planSnapshot page for the options' filters and window, pinned to the first page's
     * sealedTipSeq exactly as a backfill pages (no download).
     */
    public static List<PlanPage> plan(String host, Options options) {
        List<PlanPage> pages = new ArrayList<>();
        try (JetstreamClient c = subscribe(host, options)) {
            long cursor = options.afterSeq == null ? 0 : options.afterSeq;
            Long pinned = options.beforeSeq;
            while (true) {
                PlanPage p = c.plan(cursor, pinned);
                pages.add(p);
                if (pinned == null) {
                    pinned = p.sealedTipSeq();
                }
                if (p.plannedThroughSeq() >= pinned) {
                    return pages;
                }
                if (p.plannedThroughSeq() <= cursor) {
                    throw new JetstreamException("planSnapshot made no progress past seq " + cursor);
                }
                cursor = p.plannedThroughSeq();
            }
        }
    }

    static HttpClient defaultHttp() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).followRedirects(HttpClient.Redirect.NORMAL)
                .executor(Executors.newCachedThreadPool(r -> {
                    Thread t = new Thread(r, "jetstream-http");
                    t.setDaemon(true);
                    return t;
                })).build();
    }
}
