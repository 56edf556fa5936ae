package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/**
 * The ring's wake window: events published to a caught-up subscriber within one window go out as one
 * read and one flush (one socket write), in order, each its own well-formed WebSocket frame.
 */
@Tag("unit")
class FlushWindowTest {
    @TempDir
    Path dir;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private Subscriber subscriber(Ring ring, RecordingSink sink) {
        ColdReplay cold = new ColdReplay(new SegmentCatalog(dir), new BlockCache(1 << 20), new VacancySet(),
                Executors.newSingleThreadExecutor());
        return new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0), ring, cold,
                sink, new SubscribeMetrics(new SimpleMeterRegistry()), SubscribeSettings.defaults(), System::nanoTime);
    }

    /** Publishes {@code n} events one by one to a live subscriber; returns the sink once all arrived. */
    private RecordingSink deliver(Ring ring, int n) throws Exception {
        ring.reset(1, 0);
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring, sink);
        sink.execute(() -> s.start(true, 0, null));
        // parked at the tip once the connection thread has run the start
        sink.thread.submit(() -> { }).get(5, TimeUnit.SECONDS);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : TestRows.rows(new SplittableRandom(3), 1, n, 10)) {
            ring.append(r.encode(enc));
            ring.publish();
            // each event on its own feed tick: without a window the parked reader takes them one by one
            sink.thread.submit(() -> { }).get(5, TimeUnit.SECONDS);
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sink.frames.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(n, sink.frames.size());
        return sink;
    }

    private static void assertInOrder(RecordingSink sink, int n) {
        List<String> frames = sink.frames;
        for (int i = 0; i < n; i++) {
            assertTrue(frames.get(i).contains("\"seq\":" + (i + 1) + ","), frames.get(i));
        }
    }

    @Test
    void eventsOfOneWindowGoOutInOneFlush() throws Exception {
        // a window far longer than the publishing takes: all 50 events ride one wake
        RecordingSink sink = deliver(new Ring(1L << 30, TimeUnit.SECONDS.toNanos(1), timer), 50);
        assertEquals(1, sink.flushes, "one flush for the window's 50 events");
        assertInOrder(sink, 50);
    }

    @Test
    void withoutAWindowEveryEventIsItsOwnFlush() throws Exception {
        RecordingSink sink = deliver(new Ring(1L << 30), 50);
        assertEquals(50, sink.flushes);
        assertInOrder(sink, 50);
    }

    @Test
    void aPublishAfterTheWindowEndedIsWokenByTheNextWindow() throws Exception {
        Ring ring = new Ring(1L << 30, TimeUnit.MILLISECONDS.toNanos(20), timer);
        RecordingSink sink = deliver(ring, 3);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : TestRows.rows(new SplittableRandom(4), 4, 2, 10)) {
            ring.append(r.encode(enc));
            ring.publish();
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sink.frames.size() < 5 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(5, sink.frames.size());
        assertInOrder(sink, 5);
    }

    /** The channel path: a batch of frames written then flushed once parses as the same frames, in order. */
    @Test
    void aBatchOfFramesInOneFlushArrivesAsWellFormedFramesInOrder() {
        EmbeddedChannel server = new EmbeddedChannel();
        server.pipeline().addLast("wsencoder", new WebSocket13FrameEncoder(false));
        server.pipeline().addLast("handler", new ChannelDuplexHandler());
        ChannelSink sink = new ChannelSink(null, null, server.pipeline().context("handler"), false, 64L << 20);
        SplittableRandom r = new SplittableRandom(9);
        List<String> sent = new ArrayList<>();
        // sizes across the 7-bit, 16-bit and 64-bit length forms and a fragmented message
        int[] sizes = {0, 1, 125, 126, 1000, 65_535, 65_536, 70_000, 3, 200};
        for (int size : sizes) {
            StringBuilder b = new StringBuilder();
            while (b.length() < size) {
                b.append((char) ('a' + r.nextInt(26)));
            }
            sent.add(b.toString());
            sink.write(WsFrame.text(b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        sink.flush();
        ByteBuf all = Unpooled.buffer();
        ByteBuf b;
        while ((b = server.readOutbound()) != null) {
            all.writeBytes(b);
            b.release();
        }
        // the client side: a masked-frames-not-required decoder reading the one byte stream
        EmbeddedChannel client = new EmbeddedChannel(new WebSocket13FrameDecoder(
                WebSocketDecoderConfig.newBuilder().expectMaskedFrames(false).maxFramePayloadLength(1 << 20).build()));
        client.writeInbound(all);
        List<String> got = new ArrayList<>();
        StringBuilder message = null;
        WebSocketFrame f;
        while ((f = client.readInbound()) != null) {
            if (f instanceof TextWebSocketFrame) {
                message = new StringBuilder();
            }
            message.append(f.content().toString(java.nio.charset.StandardCharsets.UTF_8));
            if (f.isFinalFragment()) {
                got.add(message.toString());
            }
            f.release();
        }
        assertEquals(sent, got);
    }
}
