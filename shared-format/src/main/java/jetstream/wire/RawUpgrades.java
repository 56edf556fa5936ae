package jetstream.wire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * An upgrade flood from one thread: raw HTTP/1.1 WebSocket upgrade requests over non-blocking
 * sockets ({@code inflight} outstanding), each request patched from one template (the query is
 * {@code dids} distinct DIDs salted with the upgrade's number), and only the response head read (an
 * answer that comes before the whole request was sent ends the sending). An accepted upgrade (101)
 * is held open and never read again, which is all the flood needs of a client: a full WebSocket
 * client per upgrade, and formatting every DID anew, kept the one-box load generator at ~55
 * upgrades/s. Used by the gateway's start-up warm-up, its flood tests and {@code UpgradeFloodBench}.
 */
public final class RawUpgrades {
    private static final int SALT_DIGITS = 8;
    /** An upgrade neither answered nor closed this long after it started counts as {@code timeout} and is closed. */
    private static final long ANSWER_NANOS = 30_000_000_000L;

    private final InetSocketAddress target;
    private final String[] sources;
    private final byte[] template;
    /** Offsets in {@link #template} where each DID's salt digits start. */
    private final int[] saltAt;
    /** The bytes being written: one chunk of one request at a time (the generator is one thread). */
    private final ByteBuffer chunk = ByteBuffer.allocateDirect(64 << 10);
    /** Upgrades by outcome: the status ({@code 503+Retry-After} when that header came), {@code timeout}, {@code error:…}. */
    public final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    private final List<SocketChannel> held = new ArrayList<>();
    /** Per upgrade: connect to its answer (or to its time-out). */
    private final List<Long> answerNanos = new ArrayList<>();

    /** {@code sources}: local addresses to spread the upgrades over (null: the kernel's choice). */
    public RawUpgrades(InetSocketAddress target, String[] sources, String path, int dids) {
        this(target, sources, path, dids, "");
    }

    /** As above, each request also carrying {@code headers} (complete header lines, each ending CRLF). */
    public RawUpgrades(InetSocketAddress target, String[] sources, String path, int dids, String headers) {
        this.target = target;
        this.sources = sources;
        StringBuilder b = new StringBuilder(dids * 44 + 512).append("GET ").append(path).append('?');
        List<Integer> salts = new ArrayList<>(dids);
        for (int i = 0; i < dids; i++) {
            b.append("wantedDids=did:plc:");
            salts.add(b.length());
            b.append("0".repeat(SALT_DIGITS)).append(String.format("%016d", i)).append('&');
        }
        b.append(" HTTP/1.1\r\nHost: ").append(target.getHostString()).append(':').append(target.getPort())
                .append("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
                .append("\r\nSec-WebSocket-Version: 13\r\n").append(headers).append("\r\n");
        template = b.toString().getBytes(StandardCharsets.US_ASCII);
        saltAt = salts.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The salt of upgrade {@code n}: its number in {@link #SALT_DIGITS} ASCII digits. */
    private static byte[] salt(int n) {
        return String.format("%0" + SALT_DIGITS + "d", n).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Puts the next bytes of {@code a}'s request (the template with its salt in every DID) into {@link #chunk},
     * ready to write. Requests are made a chunk at a time so that none is held whole: 200 in-flight 440 KB
     * copies lived through this JVM's young collections, whose copying paused the live subscribers and the
     * readiness prober sharing the JVM for up to 0.85 s.
     */
    private ByteBuffer next(Attempt a) {
        chunk.clear();
        int from = a.sent;
        int n = Math.min(chunk.capacity(), template.length - from);
        chunk.put(template, from, n);
        int i = java.util.Arrays.binarySearch(saltAt, from - SALT_DIGITS + 1);
        for (i = i < 0 ? -i - 1 : i; i < saltAt.length && saltAt[i] < from + n; i++) {
            for (int d = 0; d < SALT_DIGITS; d++) {
                int at = saltAt[i] + d;
                if (at >= from && at < from + n) {
                    chunk.put(at - from, a.salt[d]);
                }
            }
        }
        return chunk.flip();
    }

    private static final class Attempt {
        final byte[] salt;
        /** Bytes of the request written so far. */
        int sent;
        final ByteBuffer response = ByteBuffer.allocate(2048);
        final long started = System.nanoTime();
        final long deadline = started + ANSWER_NANOS;

        Attempt(byte[] salt) {
            this.salt = salt;
        }
    }

    /**
     * Runs {@code upgrades} upgrades, at most {@code inflight} unanswered at once; returns when each is
     * answered, failed or timed out (a server that stops reading a request would otherwise hang the run).
     */
    public void run(int upgrades, int inflight) throws IOException {
        run(upgrades, inflight, Long.MAX_VALUE);
    }

    /**
     * As {@link #run(int, int)}, for at most {@code maxNanos}: then no upgrade is started and those unanswered are
     * counted as {@code timeout} and closed.
     */
    public void run(int upgrades, int inflight, long maxNanos) throws IOException {
        long end = System.nanoTime() + Math.min(maxNanos, Long.MAX_VALUE / 4);
        try (Selector selector = Selector.open()) {
            int started = 0;
            int answered = 0;
            int open = 0;
            while (answered < upgrades) {
                if (System.nanoTime() - end > 0) {
                    upgrades = started; // what is still open times out below, at once
                }
                while (started < upgrades && open < inflight) {
                    SocketChannel ch = SocketChannel.open();
                    ch.configureBlocking(false);
                    if (sources != null) {
                        ch.bind(new InetSocketAddress(sources[started % sources.length], 0));
                    }
                    Attempt a = new Attempt(salt(started));
                    if (ch.connect(target)) {
                        ch.register(selector, SelectionKey.OP_WRITE | SelectionKey.OP_READ, a);
                    } else {
                        ch.register(selector, SelectionKey.OP_CONNECT, a);
                    }
                    started++;
                    open++;
                }
                selector.select(1000);
                long now = System.nanoTime();
                for (SelectionKey k : selector.keys()) {
                    if (k.isValid() && (now - ((Attempt) k.attachment()).deadline > 0 || now - end > 0)) {
                        outcomes.computeIfAbsent("timeout", x -> new LongAdder()).increment();
                        answerNanos.add(now - ((Attempt) k.attachment()).started);
                        answered++;
                        open--;
                        k.cancel();
                        k.channel().close();
                    }
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) {
                        continue; // timed out above
                    }
                    SocketChannel ch = (SocketChannel) k.channel();
                    Attempt a = (Attempt) k.attachment();
                    String outcome = null;
                    try {
                        if (k.isConnectable() && ch.finishConnect()) {
                            // Reads while it writes: a server may refuse from the first bytes, and then the
                            // rest need not be sent.
                            k.interestOps(SelectionKey.OP_WRITE | SelectionKey.OP_READ);
                        } else {
                            if (k.isWritable()) {
                                // as a client writes a request: as much as the socket takes now, not a chunk per round
                                for (int n = 1; n > 0 && a.sent < template.length; a.sent += n) {
                                    n = ch.write(next(a));
                                }
                                if (a.sent == template.length) {
                                    k.interestOps(SelectionKey.OP_READ);
                                }
                            }
                            if (k.isReadable()) {
                                outcome = ch.read(a.response) < 0 ? "error:closed" : status(a.response);
                            }
                        }
                    } catch (IOException e) {
                        outcome = "error:" + e.getClass().getSimpleName();
                    }
                    if (outcome == null) {
                        continue;
                    }
                    outcomes.computeIfAbsent(outcome, x -> new LongAdder()).increment();
                    answerNanos.add(System.nanoTime() - a.started);
                    answered++;
                    open--;
                    k.cancel();
                    if ("101".equals(outcome)) {
                        held.add(ch);
                    } else {
                        ch.close();
                    }
                }
            }
        }
    }

    /** The status (with "+Retry-After" when that header came) once the response head is complete, else null. */
    private static String status(ByteBuffer response) {
        String head = new String(response.array(), 0, response.position(), StandardCharsets.ISO_8859_1);
        int end = head.indexOf("\r\n\r\n");
        if (end < 0) {
            return response.hasRemaining() ? null : "error:head too long";
        }
        String code = head.length() >= 12 ? head.substring(9, 12) : "error:short";
        return head.substring(0, end).toLowerCase(java.util.Locale.ROOT).contains("\r\nretry-after:")
                ? code + "+Retry-After" : code;
    }

    /** The {@code q} quantile (0..1) of the answer times in milliseconds, after {@link #run}; -1 before. */
    public double answerMillis(double q) {
        if (answerNanos.isEmpty()) {
            return -1;
        }
        List<Long> sorted = new ArrayList<>(answerNanos);
        java.util.Collections.sort(sorted);
        return sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * q) - (q > 0 ? 1 : 0))) / 1e6;
    }

    /** Closes the accepted (101) connections held since their upgrade. */
    public void closeHeld() {
        for (SocketChannel ch : held) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
        held.clear();
    }
}
