package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;

/**
 * A request head is charged to the state budget from its first byte, before the decoder holds it; a read
 * that does not fit is answered 503 with {@code Retry-After} at once and the rest is dropped undecoded.
 */
@Tag("unit")
class HeadBudgetTest {
    private static final int LINE_LIMIT = 1 << 20;
    private final AtomicInteger refusals = new AtomicInteger();

    private EmbeddedChannel channel(StateBudget budget) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(HeadBudget.NAME, new HeadBudget(budget, refusals::incrementAndGet, LINE_LIMIT))
                .addLast(HeadBudget.DECODER, new HttpRequestDecoder(LINE_LIMIT, 8192, 8192));
        return ch;
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    private static String line(String path, int queryChars) {
        return "GET " + path + "?wantedCollections=" + "a".repeat(queryChars) + " HTTP/1.1\r\n";
    }

    @Test
    void aHeadThatFitsIsChargedFromItsFirstByteAndHandedOver() {
        StateBudget budget = new StateBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        String first = line("/subscribe", 10_000);
        String rest = "Host: x\r\n\r\n";
        ch.writeInbound(ascii(first));
        assertEquals(HeadBudget.PER_BYTE * first.length(), budget.used(), "charged before the line is complete");
        assertNull(ch.readInbound(), "nothing decoded yet");
        ch.writeInbound(ascii(rest));
        assertInstanceOf(HttpRequest.class, ch.readInbound());
        long head = HeadBudget.PER_BYTE * (first.length() + rest.length());
        assertEquals(head, budget.used());
        StateBudget.Reservation r = ch.pipeline().get(HeadBudget.class).handOver();
        assertNotNull(r);
        assertEquals(head, r.bytes(), "the filter takes over what the head cost");
        r.release();
        assertEquals(0, budget.used());
        assertEquals(0, refusals.get());
        ch.finishAndReleaseAll();
    }

    /**
     * A request line arriving in pieces reaches the decoder once, whole (the decoder scans a line from its start
     * on every read it gets); what follows the line goes on as it comes, and the next head is kept again.
     */
    @Test
    void theDecoderGetsARequestLineOnlyWhenItIsWhole() {
        StateBudget budget = new StateBudget(8 << 20);
        EmbeddedChannel ch = new EmbeddedChannel();
        java.util.List<Integer> reads = new java.util.ArrayList<>();
        ch.pipeline().addLast(HeadBudget.NAME, new HeadBudget(budget, refusals::incrementAndGet, LINE_LIMIT))
                .addLast("count", new io.netty.channel.ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                        reads.add(((ByteBuf) msg).readableBytes());
                        ctx.fireChannelRead(msg);
                    }
                })
                .addLast(HeadBudget.DECODER, new HttpRequestDecoder(LINE_LIMIT, 8192, 8192));
        String first = line("/subscribe", 400_000);
        for (int at = 0; at < first.length(); at += 4096) {
            ch.writeInbound(ascii(first.substring(at, Math.min(first.length(), at + 4096))));
        }
        assertEquals(java.util.List.of(first.length()), reads, "one read of the whole line");
        ch.writeInbound(ascii("Host: x\r\n"));
        ch.writeInbound(ascii("\r\n"));
        assertEquals(java.util.List.of(first.length(), 9, 2), reads, "the headers go on as they come");
        HttpRequest r = assertInstanceOf(HttpRequest.class, ch.readInbound());
        assertEquals(first.length() - "GET  HTTP/1.1\r\n".length(), r.uri().length());
        ch.pipeline().get(HeadBudget.class).handOver().release();
        ch.writeInbound(ascii("GET /x HTTP/1.1"));
        assertEquals(3, reads.size(), "the next line is kept until whole");
        ch.writeInbound(ascii("\r\nHost: y\r\n\r\n"));
        assertEquals(4, reads.size());
        assertEquals("GET /x HTTP/1.1\r\nHost: y\r\n\r\n".length(), reads.get(3));
        ch.finishAndReleaseAll();
    }

    @Test
    void aHeadOverTheBudgetIsRefusedBeforeItIsDecoded() {
        StateBudget budget = new StateBudget(120_000); // a large head may fill 90,000 of it
        EmbeddedChannel ch = channel(budget);
        String line = line("/subscribe", 60_000);
        int chunk = 4_000;
        for (int at = 0; at < 4 * chunk; at += chunk) { // 16,000 bytes: a small head so far, charged as read
            ch.writeInbound(ascii(line.substring(at, at + chunk)));
        }
        assertEquals(HeadBudget.PER_BYTE * 4 * chunk, budget.used());
        assertEquals(0, refusals.get());
        ch.writeInbound(ascii(line.substring(4 * chunk, 5 * chunk))); // large now: its whole line would not fit
        assertEquals(1, refusals.get());
        String answer = ((ByteBuf) ch.readOutbound()).toString(StandardCharsets.UTF_8);
        assertTrue(answer.startsWith("HTTP/1.1 503 Service Unavailable\r\n"), answer);
        assertTrue(answer.contains("\r\nRetry-After: 5\r\n"), answer);
        assertTrue(answer.contains("\r\nConnection: close\r\n"), answer);
        assertTrue(answer.endsWith("\r\n\r\n" + UpgradeAnswers.STATE_BUDGET_SPENT + "\n"), answer);
        assertTrue(answer.contains("Content-Type: text/plain"), answer);

        ByteBuf more = ascii(line.substring(5 * chunk) + "Host: x\r\n\r\n");
        ch.writeInbound(more);
        assertEquals(0, more.refCnt(), "the rest is dropped");
        assertNull(ch.readInbound(), "never decoded");
        assertEquals(HeadBudget.PER_BYTE * 4 * chunk, budget.used(), "what was read before stays charged");
        ch.close();
        assertEquals(0, budget.used(), "given back when the connection closes");
        ch.finishAndReleaseAll();
    }

    /**
     * Large heads arriving together, a read each in turn: each admitted one is charged for a whole line from its
     * first large read, so those admitted finish and the rest are refused early. Charged by the bytes read, all
     * ten filled the head ceiling half-read and every one was refused.
     */
    @Test
    void largeHeadsArrivingTogetherFinishInTurnOrAreRefusedEarly() {
        int limit = 100_000;
        StateBudget budget = new StateBudget(2_000_000); // head ceiling 1,500,000: three whole lines
        java.util.List<EmbeddedChannel> heads = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            EmbeddedChannel ch = new EmbeddedChannel();
            ch.pipeline().addLast(HeadBudget.NAME, new HeadBudget(budget, refusals::incrementAndGet, limit))
                    .addLast(HeadBudget.DECODER, new HttpRequestDecoder(limit, 8192, 8192));
            heads.add(ch);
        }
        String head = line("/subscribe", 90_000) + "Host: x\r\n\r\n";
        int chunk = 10_000;
        int[] decoded = new int[heads.size()];
        for (int at = 0; at < head.length(); at += chunk) {
            for (int i = 0; i < heads.size(); i++) {
                EmbeddedChannel ch = heads.get(i);
                ch.writeInbound(ascii(head.substring(at, Math.min(head.length(), at + chunk))));
                if (ch.readInbound() instanceof HttpRequest r) {
                    assertTrue(r.decoderResult().isSuccess(), r.decoderResult().toString());
                    decoded[i]++;
                }
            }
            assertTrue(budget.used() <= budget.headCeiling(), budget.used() + " over the head ceiling");
        }
        assertEquals(java.util.List.of(1, 1, 1, 0, 0, 0, 0, 0, 0, 0),
                java.util.Arrays.stream(decoded).boxed().toList(), "the first three finish");
        assertEquals(7, refusals.get());
        assertEquals(3 * HeadBudget.PER_BYTE * head.length() + 7 * HeadBudget.PER_BYTE * chunk, budget.used(),
                "a finished head is charged what it read; a refused one its first read");
        heads.forEach(EmbeddedChannel::finishAndReleaseAll);
        assertEquals(0, budget.used(), "all given back when the connections close");
    }

    /** A request line longer than the decoder takes is not kept past that: the decoder sees it and refuses it. */
    @Test
    void aLineOverTheLimitGoesToTheDecoderToBeRefused() {
        int limit = 20_000;
        StateBudget budget = new StateBudget(8 << 20);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(HeadBudget.NAME, new HeadBudget(budget, refusals::incrementAndGet, limit))
                .addLast(HeadBudget.DECODER, new HttpRequestDecoder(limit, 8192, 8192));
        String line = line("/subscribe", 60_000);
        int sent = 0;
        Object decoded = null;
        while (decoded == null && sent + 5_000 <= line.length()) {
            ch.writeInbound(ascii(line.substring(sent, sent + 5_000)));
            sent += 5_000;
            decoded = ch.readInbound();
        }
        HttpRequest r = assertInstanceOf(HttpRequest.class, decoded);
        assertTrue(r.decoderResult().isFailure(), "refused by the decoder");
        assertTrue(sent <= limit + 5_000, "kept " + sent + " bytes, no more than the limit and a read");
        assertEquals(0, refusals.get());
        ch.finishAndReleaseAll();
    }

    /** Room is left for the parse of heads that have arrived: a large head stops short of it, a small one does not. */
    @Test
    void aLargeHeadStopsAtTheHeadCeilingASmallOneDoesNot() {
        StateBudget budget = new StateBudget(200_000);
        StateBudget.Reservation held = budget.tryReserve(120_000);
        EmbeddedChannel large = channel(budget);
        large.writeInbound(ascii(line("/subscribe", 17_000))); // charged for a whole line: over the 150,000 ceiling
        assertEquals(1, refusals.get());
        assertEquals(120_000, budget.used());
        EmbeddedChannel small = channel(budget);
        String head = line("/subscribe", 10_000) + "Host: x\r\n\r\n"; // 40,000 more: within the limit
        small.writeInbound(ascii(head));
        assertInstanceOf(HttpRequest.class, small.readInbound());
        assertEquals(1, refusals.get());
        assertEquals(120_000 + HeadBudget.PER_BYTE * head.length(), budget.used());
        held.release();
        large.finishAndReleaseAll();
        small.finishAndReleaseAll();
    }

    @Test
    void aFullBudgetRefusesTheFirstReadInXrpcWordsOnV2() {
        StateBudget budget = new StateBudget(1000);
        StateBudget.Reservation filler = budget.tryReserve(1000);
        EmbeddedChannel ch = channel(budget);
        ch.writeInbound(ascii(line(UpgradeFilter.V2_PATH, 10)));
        String answer = ((ByteBuf) ch.readOutbound()).toString(StandardCharsets.UTF_8);
        assertTrue(answer.startsWith("HTTP/1.1 503 "), answer);
        assertTrue(answer.contains("Content-Type: application/json\r\n"), answer);
        assertTrue(answer.endsWith("{\"error\":\"ServiceUnavailable\",\"message\":\"" + UpgradeAnswers.STATE_BUDGET_SPENT
                + "\"}"), answer);
        assertEquals(1000, budget.used(), "a refused first read holds nothing");
        filler.release();
        ch.finishAndReleaseAll();
    }

    @Test
    void afterTheUpgradeBytesPassUncharged() {
        StateBudget budget = new StateBudget(1000);
        EmbeddedChannel ch = channel(budget);
        ch.pipeline().remove(HeadBudget.DECODER); // the WebSocket handshake replaced the HTTP decoder
        ch.writeInbound(ascii("x".repeat(5000)));
        ByteBuf frame = ch.readInbound();
        assertEquals(5000, frame.readableBytes());
        frame.release();
        assertEquals(0, budget.used());
        assertEquals(0, refusals.get());
        ch.finishAndReleaseAll();
    }
}
