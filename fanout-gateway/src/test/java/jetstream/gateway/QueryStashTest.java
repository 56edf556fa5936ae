package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.util.ReferenceCountUtil;

/** The stream endpoints' queries leave the request line behind the decoder; nothing else changes. */
@Tag("unit")
class QueryStashTest {
    private final QueryStash stash = new QueryStash();
    private final EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestDecoder(1 << 20, 8192, 8192), stash);

    private List<HttpRequest> send(String... requests) {
        for (String r : requests) {
            ch.writeInbound(Unpooled.copiedBuffer(r, StandardCharsets.ISO_8859_1));
        }
        List<HttpRequest> out = new ArrayList<>();
        for (Object m; (m = ch.readInbound()) != null; ) {
            if (m instanceof HttpRequest r) {
                out.add(r);
            }
            ReferenceCountUtil.release(m);
        }
        return out;
    }

    private static String get(String uri, String... headers) {
        return "GET " + uri + " HTTP/1.1\r\nHost: x\r\n" + String.join("", headers) + "\r\n";
    }

    @Test
    void aStreamQueryIsStashedAndTakenBackByItsToken() {
        String big = "wantedDids=did:plc:a&".repeat(20_000) + "cursor=5";
        List<HttpRequest> rs = send(get("/subscribe?" + big), get(UpgradeFilter.V2_PATH + "?dids=did:plc:b"));
        assertEquals("/subscribe", rs.get(0).uri());
        assertEquals(UpgradeFilter.V2_PATH, rs.get(1).uri());
        // pipelined: both stashed, each taken by its own token
        assertEquals("dids=did:plc:b", stash.take(rs.get(1).headers().get(QueryStash.HEADER)));
        assertThrows(IllegalStateException.class, () -> stash.take(rs.get(0).headers().get(QueryStash.HEADER)),
                "taking the later request's query dropped the earlier one, whose request never reached the filter");
        HttpRequest again = send(get("/subscribe?" + big)).get(0);
        assertEquals(big, stash.take(again.headers().get(QueryStash.HEADER)));
    }

    @Test
    void otherRequestsKeepTheirUriAndLoseAClientsTokenHeader() {
        List<HttpRequest> rs = send(get("/subscribe"), get("/subscribe/x?a=1"), get("/xrpc/other?a=1"),
                get("/subscribe?a=1", QueryStash.HEADER + ": 7\r\n").replace("GET", "HEAD"),
                get("http://x/subscribe?a=1"), get("/q/health?x=1", QueryStash.HEADER + ": 1\r\n"));
        assertEquals(List.of("/subscribe", "/subscribe/x?a=1", "/xrpc/other?a=1", "/subscribe?a=1", "http://x/subscribe?a=1",
                "/q/health?x=1"), rs.stream().map(HttpRequest::uri).toList());
        for (HttpRequest r : rs) {
            assertNull(r.headers().get(QueryStash.HEADER), r.uri());
        }
        HttpRequest forged = send(get("/subscribe?a=2", QueryStash.HEADER + ": 99\r\n")).get(0);
        assertEquals("1", forged.headers().get(QueryStash.HEADER), "the stash's own token replaces a client's");
        assertEquals("a=2", stash.take("1"));
    }
}
