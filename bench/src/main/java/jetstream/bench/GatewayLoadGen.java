package jetstream.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.http.WebSocketFrame;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The load generator of {@link GatewayBench}, run as its own JVM: opens WebSocket subscriptions
 * with the Vert.x client and only counts complete messages and bytes — no JSON parsing, no
 * decompression. With latency on, it reads each text message's event time with a byte search
 * ({@code "time_us":} on v1 and the floor, the fixed-layout {@code "time":"…Z"} tail on v2) and
 * records now − time in a 10 µs histogram; "now" is CLOCK_REALTIME read once at start and
 * advanced with {@link System#nanoTime}, the same calibration the producer uses.
 *
 * <p>Commands on stdin, one per line; each answer is one stdout line starting with {@code LG}:
 * {@code open <n> <url> <latency 0|1>}, {@code stats}, {@code lat}, {@code closeall}, {@code exit}.
 */
public final class GatewayLoadGen {
    private static final long BUCKET_MICROS = 10;
    private static final int BUCKETS = 1_000_000; // 10 s
    private static final byte[] TIME_US = "\"time_us\":".getBytes(StandardCharsets.US_ASCII);

    private final Vertx vertx = Vertx.vertx();
    private final WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions()
            .setMaxFrameSize(1 << 24).setMaxMessageSize(1 << 26).setMaxConnections(100_000).setConnectTimeout(60_000));
    private final List<WebSocket> open = new ArrayList<>();
    private final LongAdder messages = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final AtomicInteger closedByServer = new AtomicInteger();
    /** Connections this side is closing, so their close does not count as closed by the server. */
    private final java.util.Set<WebSocket> closing = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final long[] hist = new long[BUCKETS + 1];
    private final long realtimeOffsetMicros = realtimeOffsetMicros();

    /** CLOCK_REALTIME µs minus nanoTime µs, read once: now = nanoTime/1000 + offset. */
    static long realtimeOffsetMicros() {
        Instant now = Instant.now();
        long nano = System.nanoTime();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000 - nano / 1000;
    }

    public static void main(String[] args) throws Exception {
        new GatewayLoadGen().run();
    }

    private void run() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            switch (a[0]) {
                case "open" -> open(Integer.parseInt(a[1]), URI.create(a[2]), "1".equals(a[3]));
                case "stats" -> reply("stats " + messages.sum() + " " + bytes.sum() + " " + closedByServer.get()
                        + " " + open.size());
                case "lat" -> latency();
                case "closeall" -> closeAll();
                case "exit" -> {
                    closeAll();
                    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                    return;
                }
                default -> reply("error unknown command " + a[0]);
            }
        }
    }

    private static void reply(String s) {
        System.out.println("LG " + s);
        System.out.flush();
    }

    private void open(int n, URI url, boolean latency) throws InterruptedException {
        long t0 = System.nanoTime();
        AtomicInteger failed = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        // A bounded number of handshakes in flight: 5 000 at once would only queue in the server's accept backlog.
        java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(64);
        String uri = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
        for (int i = 0; i < n; i++) {
            inFlight.acquire();
            WebSocketConnectOptions o = new WebSocketConnectOptions().setHost(url.getHost()).setPort(url.getPort())
                    .setURI(uri);
            connect(o, latency).onComplete(r -> {
                if (r.succeeded()) {
                    synchronized (open) {
                        open.add(r.result());
                    }
                } else {
                    if (failed.getAndIncrement() == 0) {
                        System.err.println("connect failed: " + r.cause());
                    }
                }
                inFlight.release();
                done.countDown();
            });
        }
        done.await(300, TimeUnit.SECONDS);
        reply("opened " + (n - failed.get()) + " " + failed.get() + " " + (System.nanoTime() - t0) / 1_000_000);
    }

    private Future<WebSocket> connect(WebSocketConnectOptions o, boolean latency) {
        Promise<WebSocket> p = Promise.promise();
        client.connect(o).onComplete(r -> {
            if (r.failed()) {
                p.fail(r.cause());
                return;
            }
            WebSocket ws = r.result();
            // Continuation frames are counted as bytes only; a message is counted at its final frame.
            ws.frameHandler(f -> frame(f, latency));
            ws.closeHandler(v -> {
                if (!closing.remove(ws)) {
                    closedByServer.incrementAndGet();
                }
            });
            p.complete(ws);
        });
        return p.future();
    }

    private void frame(WebSocketFrame f, boolean latency) {
        Buffer b = f.binaryData();
        bytes.add(b.length());
        if (f.isFinal()) {
            messages.increment();
        }
        if (latency && f.isText()) {
            long t = eventTime(b);
            if (t > 0) {
                long lag = (System.nanoTime() / 1000 + realtimeOffsetMicros - t) / BUCKET_MICROS;
                int i = (int) Math.max(0, Math.min(BUCKETS, lag));
                synchronized (hist) {
                    hist[i]++;
                }
            }
        }
    }

    /** The event's time in µs: v1 / floor {@code "time_us":N}, else the v2 frame's {@code "time":"…Z"} tail. */
    static long eventTime(Buffer b) {
        int n = Math.min(b.length(), 256);
        outer:
        for (int i = 0; i + TIME_US.length < n; i++) {
            for (int k = 0; k < TIME_US.length; k++) {
                if (b.getByte(i + k) != TIME_US[k]) {
                    continue outer;
                }
            }
            long v = 0;
            for (int j = i + TIME_US.length; j < b.length(); j++) {
                byte c = b.getByte(j);
                if (c < '0' || c > '9') {
                    break;
                }
                v = v * 10 + (c - '0');
            }
            return v;
        }
        // v2 message: ...,"time":"YYYY-MM-DDThh:mm:ss.ffffffZ"}}  — 27 characters of time before "}}
        int end = b.length() - 3; // index of the closing quote
        if (end < 28 || b.getByte(end) != '"' || b.getByte(end - 1) != 'Z') {
            return -1;
        }
        int s = end - 27;
        int year = num(b, s, 4);
        int month = num(b, s + 5, 2);
        int day = num(b, s + 8, 2);
        long secs = daysFromCivil(year, month, day) * 86_400L + num(b, s + 11, 2) * 3600L + num(b, s + 14, 2) * 60L
                + num(b, s + 17, 2);
        return secs * 1_000_000 + num(b, s + 20, 6);
    }

    private static int num(Buffer b, int off, int len) {
        int v = 0;
        for (int i = 0; i < len; i++) {
            v = v * 10 + (b.getByte(off + i) - '0');
        }
        return v;
    }

    /** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
    static long daysFromCivil(int y, int m, int d) {
        y -= m <= 2 ? 1 : 0;
        long era = (y >= 0 ? y : y - 399) / 400;
        long yoe = y - era * 400;
        long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146_097 + doe - 719_468;
    }

    /** Reports and resets the latency histogram: count, p50, p99, p99.9, max (µs). */
    private void latency() {
        long[] h;
        synchronized (hist) {
            h = hist.clone();
            java.util.Arrays.fill(hist, 0);
        }
        long count = 0;
        for (long c : h) {
            count += c;
        }
        reply("lat " + count + " " + quantile(h, count, 0.50) + " " + quantile(h, count, 0.99) + " "
                + quantile(h, count, 0.999) + " " + quantile(h, count, 1.0));
    }

    private static long quantile(long[] h, long count, double q) {
        if (count == 0) {
            return -1;
        }
        long rank = (long) Math.ceil(q * count);
        long seen = 0;
        for (int i = 0; i < h.length; i++) {
            seen += h[i];
            if (seen >= rank) {
                return (i + 1) * BUCKET_MICROS;
            }
        }
        return BUCKETS * BUCKET_MICROS;
    }

    private void closeAll() throws InterruptedException {
        List<WebSocket> all;
        synchronized (open) {
            all = new ArrayList<>(open);
            open.clear();
        }
        CountDownLatch done = new CountDownLatch(all.size());
        closing.addAll(all);
        for (WebSocket ws : all) {
            ws.close().onComplete(r -> done.countDown());
        }
        done.await(60, TimeUnit.SECONDS);
        reply("closed " + all.size());
    }
}
