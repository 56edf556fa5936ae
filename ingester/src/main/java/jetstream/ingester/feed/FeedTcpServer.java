package jetstream.ingester.feed;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import jetstream.atproto.DecodeException;
import jetstream.feed.FeedAuth;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.writer.ReadableLog;
import jetstream.replay.ActiveBlockSource;
import jetstream.segment.ZstdFrames;
import org.jboss.logging.Logger;

/**
 * Serves the readable log over TCP (optionally TLS) to readers on other nodes, same frames as
 * {@link FeedServer} after a shared-secret handshake: challenge nonce, HMAC answer, subscribe.
 * A connection that does not answer correctly within the handshake timeout is refused and counted
 * ({@code jetstream_feed_auth_refused_total{reason}}) before any log frame is sent.
 *
 * <p>One blocking thread per reader, at most {@code maxReaders} (gateways are tens, not thousands),
 * so TLS is the JDK's {@link SSLSocket} rather than an {@code SSLEngine} pump on the selector. A
 * reader never holds more than one batch ({@value #BATCH_BYTES} bytes of shared, once-encoded frames)
 * beyond the kernel's socket buffer; the writer never waits for it. A watchdog closes the socket of
 * a reader whose position the log evicted, which also ends a write blocked on a reader that stopped
 * reading (counted as a slow-reader disconnect, as on the UNIX feed).
 */
public final class FeedTcpServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FeedTcpServer.class);
    static final int BATCH_BYTES = 256 << 10;
    private static final long HEARTBEAT_NANOS = 1_000_000_000L;
    private static final long WATCHDOG_MILLIS = 250;
    /**
     * After a write a reader lets the next appends gather this long before it writes again: at the
     * network's 3,000 events/s that is a few events per write instead of one write and one wake-up per
     * event per reader (the bounded added latency of the TCP feed).
     */
    static final long LINGER_NANOS = 2_000_000L;
    /** Largest frame a reader may send: auth and subscribe are fixed and tiny. */
    static final int MAX_READER_FRAME = 64;
    /** Most block frame bytes one {@code READ_ACTIVE} answer carries (beyond its last block), whatever was asked. */
    static final long MAX_ACTIVE_ANSWER_BYTES = 8 << 20;
    /** A {@code READ_ACTIVE} answer still being written after this long is cut (its reader stopped reading). */
    private static final long ACTIVE_ANSWER_NANOS = 30_000_000_000L;

    /**
     * @param host bind address (empty = all interfaces); {@code port} 0 = ephemeral
     * @param tls null = plain TCP
     */
    public record Config(String host, int port, byte[] secret, SSLContext tls, int maxReaders,
                         Duration handshakeTimeout) {
        public Config {
            if (secret == null || secret.length < FeedAuth.MIN_SECRET_BYTES) {
                throw new IllegalArgumentException("the TCP feed needs a secret of at least "
                        + FeedAuth.MIN_SECRET_BYTES + " bytes (JETSTREAM_FEED_SECRET or JETSTREAM_FEED_SECRET_FILE)");
            }
        }

        /** {@code [host]:port} as in {@code JETSTREAM_FEED_TCP_ADDR}. */
        public static Config parse(String addr, byte[] secret, SSLContext tls, int maxReaders) {
            int colon = addr.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("JETSTREAM_FEED_TCP_ADDR '" + addr + "' is not [host]:port");
            }
            String host = addr.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new Config(host, Integer.parseInt(addr.substring(colon + 1)), secret, tls, maxReaders,
                    Duration.ofSeconds(5));
        }
    }

    private final Config config;
    private final ReadableLog log;
    private final ActiveBlockSource active;
    private final IngestMetrics metrics;
    private final ServerSocket server;
    private final Thread acceptor;
    private final Thread watchdog;
    private final Set<Reader> readers = ConcurrentHashMap.newKeySet();
    private final MeterRegistry registry;
    /** {@code READ_ACTIVE} answers completed. */
    private final Counter activeReads;
    private volatile boolean running = true;

    public FeedTcpServer(Config config, ReadableLog log, IngestMetrics metrics) throws IOException {
        this(config, log, metrics, null);
    }

    /**
     * @param active answers readers' {@code READ_ACTIVE} from the writer's active segment files; null
     *     refuses it as a protocol error
     */
    public FeedTcpServer(Config config, ReadableLog log, IngestMetrics metrics, ActiveBlockSource active)
            throws IOException {
        this.config = config;
        this.log = log;
        this.active = active;
        this.metrics = metrics;
        this.registry = metrics.registry();
        this.server = config.tls() != null ? config.tls().getServerSocketFactory().createServerSocket() : new ServerSocket();
        server.setReuseAddress(true);
        server.bind(config.host().isEmpty() ? new InetSocketAddress(config.port())
                : new InetSocketAddress(config.host(), config.port()), 128);
        Gauge.builder("jetstream_feed_tcp_readers", readers, Set::size).register(registry);
        this.activeReads = Counter.builder("jetstream_feed_active_reads_total").register(registry);
        this.acceptor = new Thread(this::acceptLoop, "feed-tcp-accept");
        this.acceptor.setDaemon(true);
        this.watchdog = new Thread(this::watchLoop, "feed-tcp-watchdog");
        this.watchdog.setDaemon(true);
    }

    /** Starts accepting; the death of the acceptor or the watchdog goes to {@code onFatal}. */
    public void start(java.util.function.Consumer<Throwable> onFatal) {
        acceptor.setUncaughtExceptionHandler((t, e) -> onFatal.accept(e));
        watchdog.setUncaughtExceptionHandler((t, e) -> onFatal.accept(e));
        acceptor.start();
        watchdog.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public int readerCount() {
        return readers.size();
    }

    /** Called after every log append: unparks the reader threads waiting for data (not writing, not lingering). */
    public void wake() {
        for (Reader r : readers) {
            if (r.waiting) {
                r.waiting = false;
                LockSupport.unpark(r.thread);
            }
        }
    }

    private void refused(String reason) {
        Counter.builder("jetstream_feed_auth_refused_total").tag("reason", reason).register(registry).increment();
    }

    private void acceptLoop() {
        while (running) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (!running) {
                    return;
                }
                // a failed accept (EMFILE, an aborted handshake) must not end the listener
                LOG.warnf("feed TCP accept failed: %s", e.toString());
                LockSupport.parkNanos(100_000_000L);
                continue;
            }
            if (readers.size() >= config.maxReaders()) {
                refused("too_many_readers");
                closeQuietly(s);
                continue;
            }
            Reader r = new Reader(s);
            readers.add(r);
            r.thread.start();
        }
    }

    private void watchLoop() {
        List<byte[]> none = new ArrayList<>(0);
        while (running) {
            LockSupport.parkNanos(WATCHDOG_MILLIS * 1_000_000L);
            long now = System.nanoTime();
            for (Reader r : readers) {
                if (r.subscribed && log.read(r.pos, 0, none, 0) < 0) {
                    r.slow();
                }
                long cut = r.answerDeadline;
                if (cut != 0 && now - cut > 0) {
                    closeQuietly(r.socket);
                }
            }
        }
    }

    private final class Reader implements Runnable {
        final Socket socket;
        final Thread thread;
        final AtomicBoolean ended = new AtomicBoolean();
        volatile boolean subscribed;
        volatile long pos;
        /** Set before the log is read for data to wait on, so an append after that read unparks it. */
        volatile boolean waiting;
        /** When a {@code READ_ACTIVE} answer being written is cut; 0 when none is. */
        volatile long answerDeadline;

        Reader(Socket socket) {
            this.socket = socket;
            this.thread = new Thread(this, "feed-tcp " + socket.getRemoteSocketAddress());
            this.thread.setDaemon(true);
        }

        /** Disconnects a reader the log has left behind; counted once. */
        void slow() {
            if (ended.compareAndSet(false, true)) {
                metrics.feedSlowReadersDisconnected.increment();
                closeQuietly(socket);
            }
        }

        @Override
        public void run() {
            try (socket) {
                FeedFrame request = handshake();
                if (request instanceof FeedFrame.Subscribe sub) {
                    serve(sub.fromSeq());
                } else if (request instanceof FeedFrame.ReadActive read) {
                    serveActive(read);
                }
            } catch (IOException e) {
                // the reader went away (or was disconnected): it resubscribes
            } finally {
                readers.remove(this);
            }
        }

        /** The reader's request ({@code SUBSCRIBE} or {@code READ_ACTIVE}), or null after a refusal (counted). */
        private FeedFrame handshake() throws IOException {
            socket.setSoTimeout((int) config.handshakeTimeout().toMillis());
            socket.setTcpNoDelay(true);
            try {
                if (socket instanceof SSLSocket ssl) {
                    ssl.startHandshake();
                }
                byte[] nonce = FeedAuth.nonce();
                OutputStream out = socket.getOutputStream();
                out.write(FeedCodec.encode(new FeedFrame.AuthChallenge(nonce)));
                out.flush();
                InputStream in = socket.getInputStream();
                FeedFrame first = readFrame(in);
                if (!(first instanceof FeedFrame.Auth a)) {
                    refused("no_secret");
                    return null;
                }
                if (!FeedAuth.verify(config.secret(), nonce, a.mac())) {
                    refused("bad_secret");
                    return null;
                }
                FeedFrame request = readFrame(in);
                if (!(request instanceof FeedFrame.Subscribe)
                        && !(request instanceof FeedFrame.ReadActive && active != null)) {
                    refused("protocol");
                    return null;
                }
                socket.setSoTimeout(0);
                return request;
            } catch (SocketTimeoutException e) {
                refused("timeout");
                return null;
            } catch (DecodeException e) {
                refused("oversize".equals(e.reason()) ? "oversize" : "protocol");
                return null;
            } catch (IOException e) {
                // closed mid-handshake (or a failed TLS handshake): no secret was presented
                refused("no_secret");
                return null;
            }
        }

        /** One small reader frame, its length checked before anything is allocated. */
        private FeedFrame readFrame(InputStream in) throws IOException {
            byte[] head = in.readNBytes(FeedCodec.LENGTH_PREFIX);
            if (head.length < FeedCodec.LENGTH_PREFIX) {
                throw new IOException("closed");
            }
            int len = ((head[0] & 0xFF) << 24) | ((head[1] & 0xFF) << 16) | ((head[2] & 0xFF) << 8) | (head[3] & 0xFF);
            if (len < 1 || len > MAX_READER_FRAME) {
                throw new DecodeException("oversize", "reader frame of " + Integer.toUnsignedString(len) + " bytes");
            }
            byte[] body = in.readNBytes(len);
            if (body.length < len) {
                throw new IOException("closed");
            }
            return FeedCodec.decode(body, 0, len);
        }

        /**
         * Answers a {@code READ_ACTIVE}: the durable complete blocks from the active segment files, then
         * {@code ACTIVE_END}, then the connection closes. Reads files only (never the writer's state beyond
         * its watermark), one block in memory at a time.
         */
        private void serveActive(FeedFrame.ReadActive read) throws IOException {
            answerDeadline = System.nanoTime() + ACTIVE_ANSWER_NANOS;
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
            long durable = log.durableSeq();
            long activeFrom;
            try (ZstdFrames zstd = new ZstdFrames()) {
                activeFrom = active.read(read.fromSeq(), read.untilSeq(), read.fromTime(), durable,
                        Math.min(read.maxBytes(), MAX_ACTIVE_ANSWER_BYTES), zstd,
                        (segment, offset, minSeq, maxSeq, count, frame) -> out.write(
                                FeedCodec.encodeActiveBlock(segment, offset, minSeq, maxSeq, count, frame)));
            }
            out.write(FeedCodec.encode(new FeedFrame.ActiveEnd(activeFrom, durable)));
            out.flush();
            activeReads.increment();
        }

        private void serve(long fromSeq) throws IOException {
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
            ReadableLog.Subscription s = log.subscribe(fromSeq);
            if (s.tooOld() != null) {
                out.write(s.tooOld());
                out.flush();
                return;
            }
            long snapshotEnd = s.snapshot().endPosition();
            long p = s.startPosition();
            pos = p;
            // watched from here: a reader that stops reading even inside its snapshot is disconnected
            subscribed = true;
            for (byte[] f : s.snapshot().frames()) {
                out.write(f);
            }
            out.flush();
            long lastWrite = System.nanoTime();
            List<byte[]> batch = new ArrayList<>();
            while (running && !ended.get()) {
                batch.clear();
                waiting = true;
                long next = log.read(p, snapshotEnd, batch, BATCH_BYTES);
                if (next < 0) {
                    slow();
                    return;
                }
                p = next;
                pos = next;
                if (batch.isEmpty()) {
                    long idle = System.nanoTime() - lastWrite;
                    if (idle < HEARTBEAT_NANOS) {
                        LockSupport.parkNanos(this, HEARTBEAT_NANOS - idle);
                        continue;
                    }
                    batch.add(FeedCodec.encode(new FeedFrame.Heartbeat(System.currentTimeMillis() * 1000,
                            log.nextSeq(), log.durableSeq())));
                }
                waiting = false;
                for (byte[] f : batch) {
                    out.write(f);
                }
                out.flush();
                lastWrite = System.nanoTime();
                linger(lastWrite + LINGER_NANOS);
            }
        }
    }

    /** Parks until {@code until} (wake-ups skip a reader that is not waiting); ends early on close. */
    private void linger(long until) {
        long rest;
        while (running && (rest = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, rest);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // the peer is gone either way
        }
    }

    @Override
    public void close() throws IOException {
        running = false;
        server.close();
        for (Reader r : readers) {
            r.ended.set(true);
            closeQuietly(r.socket);
        }
        LockSupport.unpark(watchdog);
        try {
            acceptor.join(5000);
            watchdog.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
