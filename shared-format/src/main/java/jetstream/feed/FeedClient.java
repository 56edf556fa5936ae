package jetstream.feed;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import jetstream.atproto.DecodeException;

/**
 * A reader of the ingester's feed socket. One daemon thread connects, sends the subscribe frame
 * and delivers every frame, in order, to a {@link Listener}. On a lost connection, a malformed
 * frame or silence longer than {@code idleTimeout} it reconnects with exponential backoff and
 * resubscribes from the seq after the last event delivered (or the original {@code fromSeq} if none
 * was), so a listener sees each seq once per connection and in ascending order across reconnects.
 * A {@link FeedFrame.TooOld} answer ends the client: the reader must replay segment files first.
 */
public final class FeedClient implements Closeable {

    /** Callbacks on the client thread; a listener that throws ends the client ({@link #failure()}). */
    public interface Listener {
        /** Every frame other than {@code Subscribed} and {@code TooOld}, in order. */
        void onFrame(FeedFrame frame);

        default void onConnected(FeedFrame.Subscribed subscribed) {}

        /** The requested seq is below the log floor; the client has stopped. */
        default void onTooOld(FeedFrame.TooOld tooOld) {}

        /** The connection was lost; the client reconnects after a backoff unless closed. */
        default void onDisconnected(Exception cause) {}
    }

    /**
     * Where and how to connect: the UNIX socket {@code socket}, or, when {@code remote} is set, the
     * ingester's TCP feed (then {@code socket} only names the client thread).
     */
    public record Options(Path socket, Duration minBackoff, Duration maxBackoff, Duration idleTimeout, Remote remote) {
        public Options(Path socket, Duration minBackoff, Duration maxBackoff, Duration idleTimeout) {
            this(socket, minBackoff, maxBackoff, idleTimeout, null);
        }

        public static Options defaults(Path socket) {
            return new Options(socket, Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofSeconds(10));
        }

        /** The default timings against a TCP feed. */
        public static Options remote(Remote remote) {
            return new Options(Path.of(remote.host() + ":" + remote.port()), Duration.ofMillis(50),
                    Duration.ofSeconds(5), Duration.ofSeconds(10), remote);
        }
    }

    /**
     * The ingester's TCP feed: {@code host:port}, the shared secret answering the handshake, and
     * {@code tls} (null = plain TCP; otherwise the server certificate is verified, hostname included).
     */
    public record Remote(String host, int port, byte[] secret, SSLContext tls) {
        public Remote {
            if (secret == null || secret.length == 0) {
                throw new IllegalArgumentException("a TCP feed needs the shared secret");
            }
        }
    }

    private final Options options;
    private final Listener listener;
    private final Thread thread;
    private final Selector selector;
    private volatile boolean closed;
    private volatile long lastEventSeq;
    private volatile long connections;
    private volatile Throwable failure;
    private volatile Socket tcp;
    private final long fromSeq;

    private FeedClient(Options options, long fromSeq, Listener listener) throws IOException {
        this.options = options;
        this.fromSeq = fromSeq;
        this.listener = listener;
        this.selector = Selector.open();
        this.thread = new Thread(this::run, "feed-client " + options.socket().getFileName());
        this.thread.setDaemon(true);
    }

    /** Starts following the feed at {@code fromSeq} ({@link FeedFrame.Subscribe#LIVE} for the live tip). */
    public static FeedClient start(Options options, long fromSeq, Listener listener) throws IOException {
        FeedClient c = new FeedClient(options, fromSeq, listener);
        c.thread.start();
        return c;
    }

    /** The seq of the last event delivered, 0 before the first. */
    public long lastEventSeq() {
        return lastEventSeq;
    }

    /** How many connections were accepted with a {@code Subscribed} answer. */
    public long connections() {
        return connections;
    }

    /** What stopped the client other than {@link #close()}, or null. */
    public Throwable failure() {
        return failure;
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    private long resumeSeq() {
        return lastEventSeq > 0 ? lastEventSeq + 1 : fromSeq;
    }

    private void run() {
        long backoff = options.minBackoff().toMillis();
        try {
            while (!closed) {
                Exception cause;
                try {
                    if (session()) {
                        return;
                    }
                    cause = new IOException("feed closed by the ingester");
                    backoff = options.minBackoff().toMillis();
                } catch (IOException | RuntimeException e) {
                    // a listener that throws is a fault of this connection too: reconnect with backoff
                    // (the listener sees the disconnect, so readiness drops) rather than die quietly
                    cause = e;
                }
                if (closed) {
                    return;
                }
                listener.onDisconnected(cause);
                selector.select(Math.max(1, backoff));
                backoff = Math.min(options.maxBackoff().toMillis(), Math.max(1, backoff) * 2);
            }
        } catch (RuntimeException | IOException | Error e) {
            if (!closed) {
                failure = e;
                listener.onDisconnected(e instanceof Exception ex ? ex : new IOException(e));
            }
        } finally {
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing to release beyond the selector itself
            }
        }
    }

    /** One connection; true when the client should stop (closed or too old). */
    private boolean session() throws IOException {
        if (options.remote() != null) {
            return tcpSession(options.remote());
        }
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(options.socket()));
            ByteBuffer req = ByteBuffer.wrap(FeedCodec.encode(new FeedFrame.Subscribe(resumeSeq())));
            while (req.hasRemaining()) {
                ch.write(req);
            }
            ch.configureBlocking(false);
            SelectionKey key = ch.register(selector, SelectionKey.OP_READ);
            try {
                return readLoop((buf, waitMillis) -> {
                    selector.select(waitMillis);
                    selector.selectedKeys().clear();
                    return ch.read(buf);
                });
            } finally {
                key.cancel();
                selector.selectNow();
            }
        }
    }

    /** Reads into {@code buf}, waiting up to about {@code waitMillis}: bytes read, 0 on none yet, -1 at end. */
    private interface Source {
        int read(ByteBuffer buf, long waitMillis) throws IOException;
    }

    /**
     * One TCP connection: answer the ingester's challenge with the HMAC of the shared secret, then
     * subscribe; the socket is closed by {@link #close()} to end a blocked read.
     */
    private boolean tcpSession(Remote r) throws IOException {
        long idleMillis = options.idleTimeout().toMillis();
        try (Socket s = FeedTcp.socket(r)) {
            tcp = s;
            if (closed) {
                return true;
            }
            InputStream in = FeedTcp.open(s, r, (int) Math.max(1, idleMillis), new FeedFrame.Subscribe(resumeSeq()));
            s.setSoTimeout((int) Math.max(1, idleMillis / 4));
            return readLoop((buf, waitMillis) -> {
                try {
                    int n = in.read(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
                    if (n > 0) {
                        buf.position(buf.position() + n);
                    }
                    return n;
                } catch (SocketTimeoutException e) {
                    return 0;
                }
            });
        } catch (IOException e) {
            if (closed) {
                return true;
            }
            throw e;
        } finally {
            tcp = null;
        }
    }

    private boolean readLoop(Source src) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(64 << 10);
        long idleMillis = options.idleTimeout().toMillis();
        long lastData = System.nanoTime();
        boolean subscribed = false;
        while (!closed) {
            int n = src.read(buf, Math.max(1, idleMillis / 4));
            if (n < 0) {
                if (!subscribed) {
                    // refused (a TCP feed's bad secret) or a broken ingester: back off, do not spin
                    throw new IOException("feed closed before subscribed");
                }
                return false;
            }
            if (n == 0) {
                if (System.nanoTime() - lastData > TimeUnit.MILLISECONDS.toNanos(idleMillis)) {
                    throw new IOException("feed silent for " + idleMillis + " ms");
                }
                continue;
            }
            lastData = System.nanoTime();
            buf.flip();
            while (buf.remaining() >= FeedCodec.LENGTH_PREFIX) {
                int len = FeedCodec.contentLength(buf.array(), buf.position());
                if (buf.remaining() < FeedCodec.LENGTH_PREFIX + len) {
                    if (buf.capacity() < FeedCodec.LENGTH_PREFIX + len) {
                        ByteBuffer bigger = ByteBuffer.allocate(FeedCodec.LENGTH_PREFIX + len);
                        bigger.put(buf);
                        bigger.flip();
                        buf = bigger;
                    }
                    break;
                }
                FeedFrame f = FeedCodec.decode(buf.array(), buf.position() + FeedCodec.LENGTH_PREFIX, len);
                buf.position(buf.position() + FeedCodec.LENGTH_PREFIX + len);
                if (!subscribed) {
                    if (f instanceof FeedFrame.TooOld t) {
                        listener.onTooOld(t);
                        return true;
                    }
                    if (!(f instanceof FeedFrame.Subscribed s)) {
                        throw new DecodeException("feed_protocol", "first frame is type 0x"
                                + Integer.toHexString(f.type() & 0xFF) + ", not subscribed");
                    }
                    subscribed = true;
                    connections++;
                    listener.onConnected(s);
                    continue;
                }
                if (f instanceof FeedFrame.Event e) {
                    if (e.seq() <= lastEventSeq) {
                        throw new DecodeException("feed_protocol", "event seq " + e.seq() + " after " + lastEventSeq);
                    }
                    lastEventSeq = e.seq();
                }
                listener.onFrame(f);
            }
            buf.compact();
        }
        return true;
    }

    private void closeTcp() {
        Socket s = tcp;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing only unblocks the client thread's read
            }
        }
    }

    /** Stops the client thread and waits for it. */
    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        closeTcp();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An iterator view: frames (events, state frames, and a final {@link FeedFrame.TooOld} if the
     * subscription is too old) through a bounded queue; the client thread blocks while it is full.
     */
    public static Subscription subscribe(Options options, long fromSeq, int capacity) throws IOException {
        return new Subscription(options, fromSeq, capacity);
    }

    public static final class Subscription implements Iterator<FeedFrame>, Closeable {
        private static final Object END = new Object();
        private final BlockingQueue<Object> queue;
        private final FeedClient client;
        private FeedFrame next;
        private boolean ended;

        private Subscription(Options options, long fromSeq, int capacity) throws IOException {
            this.queue = new ArrayBlockingQueue<>(capacity);
            this.client = FeedClient.start(options, fromSeq, new Listener() {
                @Override
                public void onFrame(FeedFrame frame) {
                    put(frame);
                }

                @Override
                public void onTooOld(FeedFrame.TooOld tooOld) {
                    put(tooOld);
                    put(END);
                }
            });
        }

        private void put(Object f) {
            try {
                queue.put(f);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        /** The next frame within {@code timeout}, or null when none arrived (or the subscription ended). */
        public FeedFrame poll(Duration timeout) throws InterruptedException {
            if (next != null) {
                FeedFrame f = next;
                next = null;
                return f;
            }
            if (ended) {
                return null;
            }
            Object f = queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (f == END) {
                ended = true;
                return null;
            }
            return (FeedFrame) f;
        }

        @Override
        public boolean hasNext() {
            while (next == null && !ended) {
                try {
                    Object f = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (f == END) {
                        ended = true;
                    } else if (f != null) {
                        next = (FeedFrame) f;
                    } else if (!client.isRunning() && queue.isEmpty()) {
                        ended = true;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return next != null;
        }

        @Override
        public FeedFrame next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            FeedFrame f = next;
            next = null;
            return f;
        }

        public FeedClient client() {
            return client;
        }

        @Override
        public void close() {
            client.closed = true;
            queue.clear();
            client.selector.wakeup();
            client.thread.interrupt();
            client.closeTcp();
            client.close();
        }
    }
}
