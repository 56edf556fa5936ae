package jetstream.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client against a scripted server on a real UNIX socket. */
@Tag("unit")
class FeedClientTest {

    private static FeedFrame.Subscribe readSubscribe(SocketChannel ch) throws IOException {
        ByteBuffer prefix = ByteBuffer.allocate(4);
        while (prefix.hasRemaining()) {
            if (ch.read(prefix) < 0) {
                throw new IOException("eof");
            }
        }
        int len = FeedCodec.contentLength(prefix.array(), 0);
        ByteBuffer body = ByteBuffer.allocate(len);
        while (body.hasRemaining()) {
            ch.read(body);
        }
        return (FeedFrame.Subscribe) FeedCodec.decode(body.array(), 0, len);
    }

    private static void send(SocketChannel ch, byte[] frame) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(frame);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static FeedFrame.Event event(long seq) {
        return FeedCodecTest.randomEvent(new Random(seq), seq);
    }

    @Test
    void reconnectsAndResumesAfterTheLastEvent(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("feed.sock");
        List<Long> requested = new CopyOnWriteArrayList<>();
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            Thread t = new Thread(() -> {
                try {
                    // connection 1: events 1..5 then a drop mid-frame
                    try (SocketChannel ch = server.accept()) {
                        requested.add(readSubscribe(ch).fromSeq());
                        send(ch, FeedCodec.encode(new FeedFrame.Subscribed(1, 1, 0, 6)));
                        for (long s = 1; s <= 5; s++) {
                            send(ch, FeedCodec.encode(event(s)));
                        }
                        byte[] half = FeedCodec.encode(event(6));
                        send(ch, java.util.Arrays.copyOf(half, half.length / 2));
                    }
                    // connection 2: a malformed frame after event 6 forces another reconnect
                    try (SocketChannel ch = server.accept()) {
                        requested.add(readSubscribe(ch).fromSeq());
                        send(ch, FeedCodec.encode(new FeedFrame.Subscribed(6, 1, 5, 7)));
                        send(ch, FeedCodec.encode(event(6)));
                        send(ch, new byte[] {0, 0, 0, 1, 0x7F});
                    }
                    // connection 3: the rest, with state frames
                    try (SocketChannel ch = server.accept()) {
                        requested.add(readSubscribe(ch).fromSeq());
                        send(ch, FeedCodec.encode(new FeedFrame.Subscribed(7, 1, 6, 12)));
                        send(ch, FeedCodec.encode(new FeedFrame.Watermark(6)));
                        for (long s = 7; s <= 10; s++) {
                            send(ch, FeedCodec.encode(event(s)));
                        }
                        send(ch, FeedCodec.encode(new FeedFrame.VacancyNotice(new Vacancy(11, 100, Vacancy.Reason.ABANDONED_LEASE))));
                        send(ch, FeedCodec.encode(event(100)));
                        Thread.sleep(300);
                    }
                } catch (IOException | InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            t.start();
            List<FeedFrame> got = new CopyOnWriteArrayList<>();
            List<Exception> disconnects = new CopyOnWriteArrayList<>();
            FeedClient.Options opts = new FeedClient.Options(sock, Duration.ofMillis(5), Duration.ofMillis(50), Duration.ofSeconds(5));
            try (FeedClient c = FeedClient.start(opts, 1, new FeedClient.Listener() {
                @Override
                public void onFrame(FeedFrame frame) {
                    got.add(frame);
                }

                @Override
                public void onDisconnected(Exception cause) {
                    disconnects.add(cause);
                }
            })) {
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (c.lastEventSeq() < 100 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(100, c.lastEventSeq());
                assertEquals(3, c.connections());
            }
            t.join();
            assertEquals(List.of(1L, 6L, 7L), requested);
            List<Long> seqs = new ArrayList<>();
            for (FeedFrame f : got) {
                if (f instanceof FeedFrame.Event e) {
                    assertEquals(event(e.seq()), e);
                    seqs.add(e.seq());
                }
            }
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 100L), seqs);
            assertTrue(got.contains(new FeedFrame.Watermark(6)));
            assertTrue(disconnects.size() >= 2);
        }
    }

    @Test
    void aListenerThatThrowsReconnectsInsteadOfDying(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("feed.sock");
        List<Long> requested = new CopyOnWriteArrayList<>();
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            // serves every connection until the test closes the socket: events from the requested seq to 5
            Thread t = new Thread(() -> {
                while (server.isOpen()) {
                    try (SocketChannel ch = server.accept()) {
                        long from = readSubscribe(ch).fromSeq();
                        requested.add(from);
                        send(ch, FeedCodec.encode(new FeedFrame.Subscribed(from, 1, from - 1, 6)));
                        for (long s = from; s <= 5; s++) {
                            send(ch, FeedCodec.encode(event(s)));
                        }
                        Thread.sleep(300);
                    } catch (IOException e) {
                        // the client hung up mid-stream (its listener threw): serve the next connection
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            t.setDaemon(true);
            t.start();
            List<Exception> disconnects = new CopyOnWriteArrayList<>();
            boolean[] thrown = new boolean[1];
            FeedClient.Options opts = new FeedClient.Options(sock, Duration.ofMillis(5), Duration.ofMillis(50), Duration.ofSeconds(5));
            try (FeedClient c = FeedClient.start(opts, 1, new FeedClient.Listener() {
                @Override
                public void onFrame(FeedFrame frame) {
                    if (frame instanceof FeedFrame.Event e && e.seq() == 3 && !thrown[0]) {
                        thrown[0] = true;
                        throw new IllegalStateException("listener bug");
                    }
                }

                @Override
                public void onDisconnected(Exception cause) {
                    disconnects.add(cause);
                }
            })) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (c.lastEventSeq() < 5 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(5, c.lastEventSeq(), "the client came back and resumed: " + requested + " " + disconnects);
                assertTrue(c.isRunning());
            }
            assertEquals(1L, requested.get(0));
            assertEquals(4L, requested.get(1), "resumed after the last event seen");
            assertTrue(disconnects.stream().anyMatch(e -> e instanceof IllegalStateException),
                    "the listener hears of the failure (readiness drops meanwhile): " + disconnects);
        }
    }

    @Test
    void tooOldEndsTheIterator(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("feed.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            Thread t = new Thread(() -> {
                try (SocketChannel ch = server.accept()) {
                    FeedFrame.Subscribe s = readSubscribe(ch);
                    send(ch, FeedCodec.encode(new FeedFrame.TooOld(s.fromSeq(), 500)));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            t.start();
            try (FeedClient.Subscription sub = FeedClient.subscribe(FeedClient.Options.defaults(sock), 3, 16)) {
                assertTrue(sub.hasNext());
                FeedFrame.TooOld tooOld = assertInstanceOf(FeedFrame.TooOld.class, sub.next());
                assertEquals(new FeedFrame.TooOld(3, 500), tooOld);
                assertTrue(!sub.hasNext());
                assertNotNull(sub.client());
            }
            t.join();
        }
    }
}
