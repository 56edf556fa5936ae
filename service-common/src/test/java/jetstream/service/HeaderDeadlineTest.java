package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpRequestDecoder;

/**
 * The request-header deadline on a channel laid out as Vert.x lays out an HTTP/1 server channel (the deadline first,
 * then the decoder named {@code httpDecoder}), on the channel's virtual clock: a head not complete within the
 * deadline closes the connection, from the open and from each later request's first byte; quiet time between
 * requests does not count; after a WebSocket handshake (the decoder replaced) the deadline stops.
 */
@Tag("unit")
class HeaderDeadlineTest {
    private static final long DEADLINE_S = 10;

    private static EmbeddedChannel channel() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        ch.pipeline().addLast(HeaderDeadline.NAME, new HeaderDeadline(TimeUnit.SECONDS.toNanos(DEADLINE_S)));
        ch.pipeline().addLast(HeaderDeadline.DECODER, new HttpRequestDecoder());
        ch.freezeTime();
        ch.register();
        return ch;
    }

    private static void send(EmbeddedChannel ch, String s) {
        ch.writeInbound(Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1));
        Object m;
        while ((m = ch.readInbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(m);
        }
    }

    private static void after(EmbeddedChannel ch, long seconds) {
        ch.advanceTimeBy(seconds, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        ch.runPendingTasks();
    }

    @Test
    void aTrickledRequestLineIsClosedAtTheDeadline() throws Exception {
        EmbeddedChannel ch = channel();
        for (char c : "GET /subscribe?wantedCollections=".toCharArray()) {
            send(ch, String.valueOf(c));
            after(ch, 1);
            if (!ch.isOpen()) {
                break;
            }
        }
        assertFalse(ch.isOpen(), "closed while the head is still incomplete");
    }

    @Test
    void theClockRunsFromTheOpenNotFromTheLastByte() throws Exception {
        EmbeddedChannel ch = channel();
        after(ch, DEADLINE_S - 1);
        send(ch, "GET / HTTP/1.1\r\nHost: x\r\n");
        assertTrue(ch.isOpen());
        after(ch, 1);
        assertFalse(ch.isOpen());
    }

    @Test
    void aSlowButCompleteHeadIsUntouched() throws Exception {
        EmbeddedChannel ch = channel();
        for (String part : new String[] {"GET / HT", "TP/1.1\r\nHo", "st: x\r\nX-A: ", "b\r\n", "\r\n"}) {
            send(ch, part);
            after(ch, 1);
        }
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen(), "a complete head stops the clock; the response and the body are not timed");
    }

    @Test
    void quietTimeBetweenRequestsIsNotTimedButEachNextHeadIs() throws Exception {
        EmbeddedChannel ch = channel();
        send(ch, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen(), "keep-alive quiet time belongs to the idle timeout");
        send(ch, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen());
        send(ch, "G");
        after(ch, DEADLINE_S - 1);
        send(ch, "ET /c HTTP/1.1\r\n");
        assertTrue(ch.isOpen());
        after(ch, 1);
        assertFalse(ch.isOpen(), "the next request's head is timed from its first byte");
    }

    @Test
    void aRequestBodyIsNotTimedAsAHead() throws Exception {
        EmbeddedChannel ch = channel();
        send(ch, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab");
        after(ch, 2 * DEADLINE_S);
        send(ch, "c");
        after(ch, 2 * DEADLINE_S);
        assertTrue(ch.isOpen());
        send(ch, "d");
        after(ch, 2 * DEADLINE_S);
        assertTrue(ch.isOpen(), "the request ended; no new byte yet");
    }

    @Test
    void aPipelinedPartialHeadIsTimedFromItsNextByte() throws Exception {
        EmbeddedChannel ch = channel();
        send(ch, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HT");
        after(ch, 2 * DEADLINE_S);
        send(ch, "T");
        after(ch, DEADLINE_S);
        assertFalse(ch.isOpen());
    }

    @Test
    void afterAWebSocketHandshakeTheDeadlineLeaves() throws Exception {
        EmbeddedChannel ch = channel();
        send(ch, "GET /subscribe HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
        // What Netty's handshaker does: the HTTP decoder is replaced by the WebSocket frame decoder.
        ch.pipeline().replace(HeaderDeadline.DECODER, "wsdecoder", new ChannelInboundHandlerAdapter());
        send(ch, "\u0089\u0080abcd");
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen(), "a subscriber's frames are not request heads");
        assertNull(ch.pipeline().get(HeaderDeadline.NAME + "-watch"));
        send(ch, "\u0089\u0080abcd");
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen());
    }

    @Test
    void aChannelWithoutTheHttp1DecoderIsLeftAlone() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        ch.pipeline().addLast(HeaderDeadline.NAME, new HeaderDeadline(TimeUnit.SECONDS.toNanos(DEADLINE_S)));
        ch.freezeTime();
        ch.register();
        after(ch, 10 * DEADLINE_S);
        assertTrue(ch.isOpen());
        assertNull(ch.pipeline().get(HeaderDeadline.NAME));
    }
}
