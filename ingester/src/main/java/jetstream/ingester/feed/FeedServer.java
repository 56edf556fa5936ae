package jetstream.ingester.feed;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import jetstream.atproto.DecodeException;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.writer.ReadableLog;

/**
 * Serves the readable log on {@code data/run/feed.sock} (docs/feed-protocol.md) from one selector
 * thread. Each reader holds a position in the log; the server writes from the shared, once-encoded
 * frames with gathering non-blocking writes. The writer never waits: a reader whose position the
 * log evicted (it fell behind the retention budget) is disconnected and must resubscribe.
 */
public final class FeedServer implements AutoCloseable {
    private static final int BATCH_BYTES = 256 << 10;
    private static final long HEARTBEAT_NANOS = 1_000_000_000L;

    private final Path socket;
    private final ReadableLog log;
    private final IngestMetrics metrics;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final Thread thread;
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final Set<Reader> readers = new HashSet<>();
    private final List<Runnable> alsoWake = new CopyOnWriteArrayList<>();
    private volatile boolean running = true;
    private volatile int readerCount;

    private static final class Reader {
        final SocketChannel ch;
        final ByteBuffer in = ByteBuffer.allocate(64);
        boolean subscribed;
        boolean closeWhenFlushed;
        long pos;
        long snapshotEnd;
        ByteBuffer[] out = new ByteBuffer[0];
        int outIdx;
        long lastWrite = System.nanoTime();

        Reader(SocketChannel ch) {
            this.ch = ch;
        }

        boolean hasPending() {
            for (int i = outIdx; i < out.length; i++) {
                if (out[i].hasRemaining()) {
                    return true;
                }
            }
            return false;
        }
    }

    public FeedServer(Path socket, ReadableLog log, IngestMetrics metrics) throws IOException {
        this.socket = socket;
        this.log = log;
        this.metrics = metrics;
        Files.createDirectories(socket.getParent());
        Files.deleteIfExists(socket);
        this.selector = Selector.open();
        this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        this.thread = new Thread(this::run, "feed-server");
        this.thread.setDaemon(true);
    }

    /** Starts the selector thread; its death (an I/O failure of the selector, a bug) goes to {@code onFatal}. */
    public void start(java.util.function.Consumer<Throwable> onFatal) {
        thread.setUncaughtExceptionHandler((t, e) -> onFatal.accept(e));
        thread.start();
    }

    /** Called after every log append; wakes the selector at most once per loop. */
    public void wake() {
        if (!wakePending.getAndSet(true)) {
            selector.wakeup();
        }
        for (Runnable r : alsoWake) {
            r.run();
        }
    }

    /** Another server of the same log (the TCP feed) to wake after every append. */
    public void alsoWake(Runnable r) {
        alsoWake.add(r);
    }

    public int readerCount() {
        return readerCount;
    }

    public Path socket() {
        return socket;
    }

    private void run() {
        try {
            while (running) {
                selector.select(250);
                wakePending.set(false);
                for (SelectionKey k : selector.selectedKeys()) {
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        accept();
                    } else if (k.isReadable()) {
                        readable((Reader) k.attachment(), k);
                    }
                }
                selector.selectedKeys().clear();
                for (Reader r : new ArrayList<>(readers)) {
                    if (r.subscribed) {
                        pump(r);
                    }
                }
                readerCount = readers.size();
            }
        } catch (IOException e) {
            if (running) {
                throw new IllegalStateException("feed server selector failed", e);
            }
        } finally {
            for (Reader r : new ArrayList<>(readers)) {
                drop(r);
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel ch;
        while ((ch = server.accept()) != null) {
            ch.configureBlocking(false);
            Reader r = new Reader(ch);
            ch.register(selector, SelectionKey.OP_READ, r);
            readers.add(r);
        }
    }

    private void readable(Reader r, SelectionKey k) {
        try {
            int n = r.ch.read(r.in);
            if (n < 0) {
                drop(r);
                return;
            }
            if (r.subscribed) {
                // readers send nothing after the subscribe frame
                r.in.clear();
                return;
            }
            if (r.in.position() < FeedCodec.LENGTH_PREFIX) {
                return;
            }
            int len = FeedCodec.contentLength(r.in.array(), 0);
            if (len > r.in.capacity() - FeedCodec.LENGTH_PREFIX) {
                throw new DecodeException("feed_frame_length", "subscribe frame too long");
            }
            if (r.in.position() < FeedCodec.LENGTH_PREFIX + len) {
                return;
            }
            FeedFrame f = FeedCodec.decode(r.in.array(), FeedCodec.LENGTH_PREFIX, len);
            if (!(f instanceof FeedFrame.Subscribe s)) {
                throw new DecodeException("feed_protocol", "first frame is not subscribe");
            }
            r.in.clear();
            subscribe(r, s.fromSeq());
        } catch (IOException | DecodeException e) {
            drop(r);
        }
    }

    private void subscribe(Reader r, long fromSeq) {
        ReadableLog.Subscription s = log.subscribe(fromSeq);
        r.subscribed = true;
        if (s.tooOld() != null) {
            r.out = new ByteBuffer[] {ByteBuffer.wrap(s.tooOld())};
            r.closeWhenFlushed = true;
            return;
        }
        List<byte[]> snap = s.snapshot().frames();
        r.out = new ByteBuffer[snap.size()];
        for (int i = 0; i < snap.size(); i++) {
            r.out[i] = ByteBuffer.wrap(snap.get(i));
        }
        r.outIdx = 0;
        r.pos = s.startPosition();
        r.snapshotEnd = s.snapshot().endPosition();
    }

    private void pump(Reader r) {
        try {
            List<byte[]> batch = new ArrayList<>();
            for (int round = 0; round < 16; round++) {
                if (r.hasPending()) {
                    long n = r.ch.write(r.out, r.outIdx, r.out.length - r.outIdx);
                    if (n > 0) {
                        r.lastWrite = System.nanoTime();
                    }
                    while (r.outIdx < r.out.length && !r.out[r.outIdx].hasRemaining()) {
                        r.outIdx++;
                    }
                    if (r.hasPending()) {
                        interest(r, SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        return;
                    }
                }
                if (r.closeWhenFlushed) {
                    drop(r);
                    return;
                }
                batch.clear();
                long next = log.read(r.pos, r.snapshotEnd, batch, BATCH_BYTES);
                if (next < 0) {
                    metrics.feedSlowReadersDisconnected.increment();
                    drop(r);
                    return;
                }
                r.pos = next;
                if (batch.isEmpty()) {
                    if (System.nanoTime() - r.lastWrite > HEARTBEAT_NANOS) {
                        batch.add(FeedCodec.encode(new FeedFrame.Heartbeat(System.currentTimeMillis() * 1000,
                                log.nextSeq(), log.durableSeq())));
                    } else {
                        interest(r, SelectionKey.OP_READ);
                        return;
                    }
                }
                r.out = new ByteBuffer[batch.size()];
                for (int i = 0; i < batch.size(); i++) {
                    r.out[i] = ByteBuffer.wrap(batch.get(i));
                }
                r.outIdx = 0;
            }
        } catch (IOException e) {
            drop(r);
        }
    }

    private void interest(Reader r, int ops) {
        SelectionKey k = r.ch.keyFor(selector);
        if (k != null && k.isValid() && k.interestOps() != ops) {
            k.interestOps(ops);
        }
    }

    private void drop(Reader r) {
        readers.remove(r);
        try {
            r.ch.close();
        } catch (IOException ignored) {
            // the reader is gone either way
        }
    }

    @Override
    public void close() throws IOException {
        running = false;
        selector.wakeup();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.close();
        selector.close();
        Files.deleteIfExists(socket);
    }
}
