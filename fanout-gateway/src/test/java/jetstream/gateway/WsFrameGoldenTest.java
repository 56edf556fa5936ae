package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionData;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtension;
import io.netty.handler.codec.http.websocketx.extensions.compression.PerMessageDeflateServerExtensionHandshaker;

/**
 * Wire bytes of the prebuilt-frame path equal the old path's: the same message written as Vert.x
 * wrote it (a Netty text/binary frame per {@link WsFrame#MAX_FRAME} fragment, continuation frames
 * after the first, through the server frame encoder and, on a deflate connection, the
 * context-takeover deflate encoder first) gives the same byte stream as {@link ChannelSink} writing
 * the shared {@link WsFrame}, for every wire and compression and across the header size boundaries.
 */
@Tag("unit")
class WsFrameGoldenTest {
    /** Sizes across the 7-bit/16-bit/64-bit length forms and the fragment boundary. */
    private static final int[] SIZES = {0, 1, 125, 126, 127, 1000, 65_535, 65_536, 65_537, 131_072, 131_073, 200_001};

    /** The old path: what Vert.x's writeFrame handed Netty for one message. */
    private static List<WebSocketFrame> oldFrames(byte[] payload, boolean binary) {
        List<WebSocketFrame> out = new ArrayList<>();
        ByteBuf all = Unpooled.wrappedBuffer(payload);
        int len = payload.length;
        if (len <= WsFrame.MAX_FRAME) {
            out.add(binary ? new BinaryWebSocketFrame(true, 0, all) : new TextWebSocketFrame(true, 0, all));
            return out;
        }
        for (int off = 0; off < len; off += WsFrame.MAX_FRAME) {
            int end = Math.min(len, off + WsFrame.MAX_FRAME);
            ByteBuf part = all.retainedSlice(off, end - off);
            boolean fin = end == len;
            out.add(off > 0 ? new ContinuationWebSocketFrame(fin, 0, part)
                    : binary ? new BinaryWebSocketFrame(fin, 0, part) : new TextWebSocketFrame(fin, 0, part));
        }
        return out;
    }

    /** Counts what the sink reports. */
    private static final class Counts implements SubscriberSink.Listener {
        final AtomicInteger drained = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();

        @Override
        public void drained() {
            drained.incrementAndGet();
        }

        @Override
        public void failed() {
            failed.incrementAndGet();
        }
    }

    /** A stand-in for Vert.x's handler: the last in the pipeline, where the sink writes from. */
    private static final class Last extends ChannelDuplexHandler {}

    private static EmbeddedChannel channel(WebSocketServerExtension deflate) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast("wsencoder", new WebSocket13FrameEncoder(false));
        if (deflate != null) {
            ch.pipeline().addLast("deflate", deflate.newExtensionEncoder());
        }
        ch.pipeline().addLast("handler", new Last());
        return ch;
    }

    private static byte[] drain(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            out.writeBytes(a);
        }
        return out.toByteArray();
    }

    private static byte[] viaOldPath(List<byte[]> messages, boolean binary, WebSocketServerExtension deflate) {
        EmbeddedChannel ch = channel(deflate);
        ChannelHandlerContext at = ch.pipeline().context("handler");
        for (byte[] m : messages) {
            for (WebSocketFrame f : oldFrames(m, binary)) {
                at.writeAndFlush(f);
            }
        }
        return drain(ch);
    }

    private static byte[] viaSink(List<byte[]> messages, boolean binary, WebSocketServerExtension deflate) {
        EmbeddedChannel ch = channel(deflate);
        ChannelSink sink = new ChannelSink(null, null, ch.pipeline().context("handler"), deflate != null, 4L << 20);
        List<WsFrame> frames = new ArrayList<>();
        for (byte[] m : messages) {
            frames.add(binary ? WsFrame.binary(m) : WsFrame.text(m));
        }
        // each shared frame written twice, as to two subscribers: the second write must see the same bytes
        for (WsFrame f : frames) {
            sink.write(f);
            sink.flush();
        }
        byte[] once = drain(ch);
        EmbeddedChannel again = channel(deflate);
        ChannelSink second = new ChannelSink(null, null, again.pipeline().context("handler"), deflate != null, 4L << 20);
        for (WsFrame f : frames) {
            second.write(f);
        }
        second.flush();
        assertArrayEquals(once, drain(again), "a shared frame reads the same for every subscriber");
        // the direct-memory form (live events) writes the same bytes
        EmbeddedChannel direct = channel(deflate);
        ChannelSink third = new ChannelSink(null, null, direct.pipeline().context("handler"), deflate != null, 4L << 20);
        for (byte[] m : messages) {
            third.write(WsFrame.of(m, binary, true));
        }
        third.flush();
        assertArrayEquals(once, drain(direct), "direct frames");
        return once;
    }

    private static byte[] text(SplittableRandom r, int size) {
        // multi-byte UTF-8 included: fragments split inside characters exactly as before
        StringBuilder b = new StringBuilder();
        while (b.length() < size) {
            b.append(r.nextInt(4) == 0 ? "é€𝄞" : "abc\"{}");
        }
        byte[] all = b.toString().getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.copyOf(all, size);
    }

    private static List<byte[]> texts(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<byte[]> out = new ArrayList<>();
        for (int s : SIZES) {
            out.add(text(r, s));
        }
        return out;
    }

    @Test
    void plainTextFramesAreByteIdentical() {
        List<byte[]> m = texts(1);
        assertArrayEquals(viaOldPath(m, false, null), viaSink(m, false, null));
    }

    @Test
    void rawBinaryFramesAreByteIdentical() {
        SplittableRandom r = new SplittableRandom(2);
        List<byte[]> m = new ArrayList<>();
        for (int s : SIZES) {
            byte[] b = new byte[s];
            r.nextBytes(b);
            m.add(b);
        }
        assertArrayEquals(viaOldPath(m, true, null), viaSink(m, true, null));
    }

    @Test
    void zstdFramesOfEveryWireAreByteIdentical() {
        EventEncoder enc = new EventEncoder();
        for (Wire wire : Wire.values()) {
            List<byte[]> m = new ArrayList<>();
            List<GatewayEvent> events = new ArrayList<>();
            for (TestRows.Row row : TestRows.rows(new SplittableRandom(3), 1, 200, 10)) {
                GatewayEvent e = row.encode(enc);
                if (e.text(wire) != null) {
                    events.add(e);
                    m.add(e.zstd(wire).getBytes());
                }
            }
            // plus incompressible messages past the fragment size
            for (byte[] t : texts(4)) {
                m.add(Dictionaries.compress(wire, t));
            }
            assertFalse(events.isEmpty());
            assertArrayEquals(viaOldPath(m, true, null), viaSink(m, true, null), wire.name());
            // the event's memoized frame is that same message
            GatewayEvent e = events.get(0);
            assertArrayEquals(e.zstd(wire).getBytes(), e.zstdFrame(wire).payload().getBytes());
            assertTrue(e.zstdFrame(wire).binary());
        }
    }

    @Test
    void eventTextFramesOfEveryWireAreByteIdentical() {
        EventEncoder enc = new EventEncoder();
        for (Wire wire : Wire.values()) {
            List<byte[]> m = new ArrayList<>();
            for (TestRows.Row row : TestRows.rows(new SplittableRandom(5), 1, 300, 10)) {
                GatewayEvent e = row.encode(enc);
                if (e.text(wire) != null) {
                    m.add(e.text(wire).getBytes());
                    assertEquals(e.textBytes(wire), e.textFrame(wire).payloadBytes());
                }
            }
            assertArrayEquals(viaOldPath(m, false, null), viaSink(m, false, null), wire.name());
        }
    }

    /** permessage-deflate with context takeover: one compressor per connection, the message sequence matters. */
    @Test
    void deflateFramesAreByteIdenticalAcrossTheContext() {
        for (String offer : new String[] {"", "client_no_context_takeover", "server_no_context_takeover"}) {
            List<byte[]> m = texts(6);
            m.addAll(texts(6)); // repeats: context takeover compresses them against the earlier ones
            byte[] old = viaOldPath(m, false, deflate(offer));
            byte[] now = viaDeflateSinkOnce(m, deflate(offer));
            assertArrayEquals(old, now, offer);
        }
    }

    private static byte[] viaDeflateSinkOnce(List<byte[]> messages, WebSocketServerExtension deflate) {
        EmbeddedChannel ch = channel(deflate);
        ChannelSink sink = new ChannelSink(null, null, ch.pipeline().context("handler"), true, 4L << 20);
        for (byte[] b : messages) {
            sink.write(WsFrame.text(b));
            sink.flush();
        }
        return drain(ch);
    }

    private static WebSocketServerExtension deflate(String param) {
        java.util.Map<String, String> params = new java.util.HashMap<>();
        if (!param.isEmpty()) {
            params.put(param, null);
        }
        return new PerMessageDeflateServerExtensionHandshaker().handshakeExtension(
                new WebSocketExtensionData("permessage-deflate", params));
    }

    @Test
    void headerLengthsFollowRfc6455() {
        assertEquals(2, WsFrame.headerLength(125));
        assertEquals(4, WsFrame.headerLength(126));
        assertEquals(4, WsFrame.headerLength(65_535));
        assertEquals(10, WsFrame.headerLength(65_536));
        WsFrame f = WsFrame.text(new byte[126]);
        ByteBuf w = f.wire();
        assertEquals(0x81, w.getUnsignedByte(0));
        assertEquals(126, w.getUnsignedByte(1));
        assertEquals(126, w.getUnsignedShort(2));
        assertEquals(130, f.wireBytes());
    }

    /** Bytes in flight are the channel's; the cap is its high water mark; draining below it wakes the subscriber. */
    @Test
    void pendingBytesWritabilityAndDrain() {
        WsFrame f = WsFrame.text(new byte[1000]);
        // what one write adds to the outbound buffer (the frame plus Netty's per-entry overhead)
        EmbeddedChannel probe = channel(null);
        ChannelSink one = new ChannelSink(null, null, probe.pipeline().context("handler"), false, 1 << 20);
        one.write(f);
        long each = one.pendingBytes();
        assertTrue(each >= f.wireBytes(), "counts at least the frame");
        EmbeddedChannel ch = channel(null);
        ChannelSink sink = new ChannelSink(null, null, ch.pipeline().context("handler"), false, 3 * each);
        Counts counts = new Counts();
        sink.listen(counts);
        AtomicInteger drained = counts.drained;
        AtomicInteger failed = counts.failed;
        for (int i = 0; i < 3; i++) {
            sink.write(f);
        }
        assertEquals(3 * each, sink.pendingBytes());
        assertEquals(3 * each, sink.writtenBytes());
        assertTrue(sink.writable(), "at the cap, not above it");
        sink.write(f);
        assertFalse(sink.writable());
        assertEquals(0, drained.get());
        sink.flush();
        assertEquals(0, sink.pendingBytes());
        assertTrue(sink.writable());
        assertEquals(1, drained.get());
        assertEquals(4 * each, sink.writtenBytes());
        assertEquals(4, drain(ch).length / f.wireBytes());
        assertEquals(0, failed.get());
    }

    /** Netty's idle handler adds a listener to every write's promise: the one shared promise must not keep them. */
    @Test
    void theSharedPromiseHoldsNoListeners() throws Exception {
        // a deflate connection: its frames take Vert.x's path, through the idle handler
        EmbeddedChannel ch = channel(deflate(""));
        ch.pipeline().addFirst(new io.netty.handler.timeout.IdleStateHandler(0, 0, 120));
        ChannelSink sink = new ChannelSink(null, null, ch.pipeline().context("handler"), true, 1 << 20);
        WsFrame f = WsFrame.text(new byte[10]);
        for (int i = 0; i < 1000; i++) {
            sink.write(f);
        }
        sink.flush();
        java.lang.reflect.Field promise = ChannelSink.class.getDeclaredField("promise");
        promise.setAccessible(true);
        java.lang.reflect.Field listeners = io.netty.util.concurrent.DefaultPromise.class.getDeclaredField("listeners");
        listeners.setAccessible(true);
        assertEquals(null, listeners.get(promise.get(sink)));
        assertTrue(drain(ch).length > 1000, "every frame went out");
    }

    /** A failed write reports once, however many frames were queued behind it; a write after close is no failure. */
    @Test
    void aFailedWriteReportsOnce() {
        // a socket that fails every write, as a reset peer does
        EmbeddedChannel ch = new EmbeddedChannel() {
            @Override
            protected void doWrite(io.netty.channel.ChannelOutboundBuffer in) throws Exception {
                throw new java.io.IOException("broken pipe");
            }
        };
        ch.pipeline().addLast("wsencoder", new WebSocket13FrameEncoder(false));
        ch.pipeline().addLast("handler", new Last());
        ChannelSink sink = new ChannelSink(null, null, ch.pipeline().context("handler"), false, 1 << 20);
        Counts counts = new Counts();
        sink.listen(counts);
        AtomicInteger failed = counts.failed;
        WsFrame f = WsFrame.text(new byte[10]);
        sink.write(f);
        sink.write(f);
        sink.flush();
        assertEquals(1, failed.get());

        EmbeddedChannel closed = channel(null);
        ChannelSink late = new ChannelSink(null, null, closed.pipeline().context("handler"), false, 1 << 20);
        Counts lateCounts = new Counts();
        late.listen(lateCounts);
        AtomicInteger lateFailed = lateCounts.failed;
        closed.close();
        late.write(f);
        late.flush();
        assertEquals(0, lateFailed.get());
    }
}
