package jetstream.gateway;

import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;

/**
 * A stand-in ingester feed on a UNIX socket: keeps an in-memory log, answers SUBSCRIBE with the
 * session preamble and the resident events, and broadcasts new events. {@link #stop()} and
 * {@link #start()} simulate an ingester restart (the log survives, as it would on disk).
 */
final class FakeFeed implements Closeable {
    private final Path socket;
    private final List<byte[]> log = new ArrayList<>();
    private final List<Long> seqs = new ArrayList<>();
    private final List<SocketChannel> live = new ArrayList<>();
    private ServerSocketChannel server;
    private Thread acceptor;
    private long durable;
    /** Subscriptions below this seq are answered TOO_OLD (0: none are). */
    private long floor;

    FakeFeed(Path socket) {
        this.socket = socket;
    }

    synchronized void start() throws IOException {
        Files.deleteIfExists(socket);
        Files.createDirectories(socket.getParent());
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        ServerSocketChannel s = server;
        acceptor = new Thread(() -> accept(s), "fake-feed-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void accept(ServerSocketChannel s) {
        while (s.isOpen()) {
            try {
                SocketChannel c = s.accept();
                ByteBuffer len = ByteBuffer.allocate(4);
                while (len.hasRemaining() && c.read(len) >= 0) {
                    // read the length prefix
                }
                ByteBuffer body = ByteBuffer.allocate(len.getInt(0));
                while (body.hasRemaining() && c.read(body) >= 0) {
                    // read the SUBSCRIBE frame
                }
                FeedFrame.Subscribe sub = (FeedFrame.Subscribe) FeedCodec.decode(body.array(), 0, body.capacity());
                handshake(c, sub.fromSeq());
            } catch (IOException e) {
                return;
            }
        }
    }

    private synchronized void handshake(SocketChannel c, long from) throws IOException {
        if (from != 0 && from < floor) {
            write(c, FeedCodec.encode(new FeedFrame.TooOld(from, floor)));
            c.close();
            return;
        }
        long next = seqs.isEmpty() ? 1 : seqs.get(seqs.size() - 1) + 1;
        long start = from == 0 ? next : from;
        write(c, FeedCodec.encode(new FeedFrame.Subscribed(start, seqs.isEmpty() ? 0 : seqs.get(0), durable, next)));
        write(c, FeedCodec.encode(new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.NONE, 0)));
        write(c, FeedCodec.encode(new FeedFrame.WriterRunning(true)));
        write(c, FeedCodec.encode(new FeedFrame.Watermark(durable)));
        for (int i = 0; i < seqs.size(); i++) {
            if (seqs.get(i) >= start) {
                write(c, log.get(i));
            }
        }
        live.add(c);
    }

    /** Appends an event and sends it to every connected reader. */
    synchronized void publish(TestRows.Row r) {
        byte[] payload = r.payload() == null ? new byte[0] : r.payload();
        byte[] frame = FeedCodec.encode(new FeedFrame.Event(r.seq(), r.witnessedAt(), 0, r.kind(), b(r.did()),
                b(r.collection()), b(r.rkey()), b(r.rev()), payload));
        log.add(frame);
        seqs.add(r.seq());
        durable = r.seq();
        byte[] wm = FeedCodec.encode(new FeedFrame.Watermark(durable));
        live.removeIf(c -> {
            try {
                write(c, frame);
                write(c, wm);
                return false;
            } catch (IOException e) {
                return true;
            }
        });
    }

    /** Drops the events below {@code seq} from the log, as a restarted ingester's log starts at its durable frontier. */
    synchronized void forgetBelow(long seq) {
        while (!seqs.isEmpty() && seqs.get(0) < seq) {
            seqs.remove(0);
            log.remove(0);
        }
        floor = seq;
    }

    synchronized void stop() throws IOException {
        server.close();
        for (SocketChannel c : live) {
            c.close();
        }
        live.clear();
        Files.deleteIfExists(socket);
    }

    private static void write(SocketChannel c, byte[] frame) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(frame);
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static byte[] b(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        stop();
    }
}
