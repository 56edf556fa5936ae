package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The HTTP request histogram's labels come from fixed sets, whatever the client sends. */
@Tag("unit")
class HttpRequestMetricsTest {
    @Test
    void labelsAreFromFixedSets() {
        assertEquals("xrpc/", HttpRequestMetrics.handler("/xrpc/network.bsky.jetstream.getBlock"));
        assertEquals("xrpc/", HttpRequestMetrics.handler("/xrpc/made.up.method"));
        assertEquals("xrpc/network.bsky.jetstream.subscribeEvents",
                HttpRequestMetrics.handler("/xrpc/network.bsky.jetstream.subscribeEvents"));
        assertEquals("subscribe", HttpRequestMetrics.handler("/subscribe"));
        assertEquals("root", HttpRequestMetrics.handler("/"));
        assertEquals("status", HttpRequestMetrics.handler("/status"));
        assertEquals("other", HttpRequestMetrics.handler("/subscribe/extra"));
        assertEquals("other", HttpRequestMetrics.handler(null));
        assertEquals("GET", HttpRequestMetrics.method("GET"));
        assertEquals("other", HttpRequestMetrics.method("PROPFIND"));
        assertEquals("other", HttpRequestMetrics.method("BREW"));
        assertEquals("404", HttpRequestMetrics.code(404));
        assertEquals("other", HttpRequestMetrics.code(0));
        assertEquals("other", HttpRequestMetrics.code(999));
    }

    @Test
    void recordsWithTheDefaultBuckets() {
        HttpRequestMetrics m = new HttpRequestMetrics();
        m.registry = new SimpleMeterRegistry();
        m.record("subscribe", "GET", "101", 3_000_000L);
        m.record("subscribe", "GET", "101", 30_000_000L);
        Timer t = m.registry.find(HttpRequestMetrics.NAME).tags("handler", "subscribe", "method", "GET", "code", "101")
                .timer();
        assertEquals(2, t.count());
        assertEquals(11, t.takeSnapshot().histogramCounts().length);
    }
}
