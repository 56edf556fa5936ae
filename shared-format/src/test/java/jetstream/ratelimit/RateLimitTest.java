package jetstream.ratelimit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class RateLimitTest {
    private static final long SEC = 1_000_000_000L;

    @Test
    void bucketAllowsBurstThenRate() {
        TokenBucket b = new TokenBucket(10, 5, 0);
        for (int i = 0; i < 5; i++) {
            assertEquals(0, b.tryAcquire(0), "burst token " + i);
        }
        long wait = b.tryAcquire(0);
        assertEquals(SEC / 10, wait, "next token in 1/rate");
        assertTrue(b.tryAcquire(SEC / 10 - 1) > 0);
        assertEquals(0, b.tryAcquire(SEC / 10));
        // A long idle refills to the burst, never beyond.
        assertTrue(b.isFull(100 * SEC));
        int allowed = 0;
        for (int i = 0; i < 50; i++) {
            if (b.tryAcquire(100 * SEC) == 0) {
                allowed++;
            }
        }
        assertEquals(5, allowed);
    }

    @Test
    void bucketSustainsExactlyTheRate() {
        TokenBucket b = new TokenBucket(100, 10, 0);
        int allowed = 0;
        // 10 requests per ms for 2 s: 2000 ms x 10 = 20000 tries, 100/s x 2 s + burst 10 admitted.
        for (long t = 0; t < 2 * SEC; t += SEC / 1000) {
            for (int i = 0; i < 10; i++) {
                if (b.tryAcquire(t) == 0) {
                    allowed++;
                }
            }
        }
        assertTrue(allowed >= 209 && allowed <= 210, "allowed " + allowed);
    }

    @Test
    void badBucketSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(0, 5, 0));
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(1, 0.5, 0));
        assertThrows(IllegalArgumentException.class, () -> new KeyedRateLimiter(1, 1, 2));
    }

    @Test
    void keysAreIndependent() {
        KeyedRateLimiter l = new KeyedRateLimiter(1, 2, 100);
        assertEquals(0, l.tryAcquire("a", 0));
        assertEquals(0, l.tryAcquire("a", 0));
        assertTrue(l.tryAcquire("a", 0) > 0);
        assertEquals(0, l.tryAcquire("b", 0), "another key has its own bucket");
    }

    @Test
    void memoryStaysBoundedUnderAFloodOfKeys() {
        KeyedRateLimiter l = new KeyedRateLimiter(1, 1, 1000);
        for (int i = 0; i < 100_000; i++) {
            l.tryAcquire("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255), 0);
            assertTrue(l.size() <= 1000, "size " + l.size());
        }
        assertTrue(l.evicted() > 0, "active buckets had to go");
    }

    @Test
    void fullBucketsGoFirstSoActiveKeysKeepTheirState() {
        KeyedRateLimiter l = new KeyedRateLimiter(1, 1, 8);
        // The abuser drains its bucket at t = 10 s; 7 others came and went long before.
        for (int i = 0; i < 7; i++) {
            l.tryAcquire("idle" + i, 0);
        }
        assertEquals(0, l.tryAcquire("abuser", 10 * SEC));
        // A newcomer at the bound: the sweep drops the full (idle) buckets, not the abuser's.
        l.tryAcquire("newcomer", 10 * SEC);
        assertTrue(l.tryAcquire("abuser", 10 * SEC) > 0, "abuser still limited");
        assertEquals(0, l.evicted(), "only full buckets were dropped");
    }

    @Test
    void concurrencyPerKeyAndGlobal() {
        ConcurrencyLimiter c = new ConcurrencyLimiter(2, 3);
        assertEquals(ConcurrencyLimiter.Outcome.OK, c.tryAcquire("a"));
        assertEquals(ConcurrencyLimiter.Outcome.OK, c.tryAcquire("a"));
        assertEquals(ConcurrencyLimiter.Outcome.PER_KEY, c.tryAcquire("a"));
        assertEquals(ConcurrencyLimiter.Outcome.OK, c.tryAcquire("b"));
        assertEquals(ConcurrencyLimiter.Outcome.GLOBAL, c.tryAcquire("c"));
        assertEquals(3, c.total());
        c.release("a");
        assertEquals(ConcurrencyLimiter.Outcome.OK, c.tryAcquire("c"));
        c.release("a");
        c.release("b");
        c.release("c");
        assertEquals(0, c.total());
        assertEquals(0, c.keys(), "no entry outlives its last slot");
        ConcurrencyLimiter unlimited = new ConcurrencyLimiter(0, 0);
        for (int i = 0; i < 1000; i++) {
            assertEquals(ConcurrencyLimiter.Outcome.OK, unlimited.tryAcquire("x"));
        }
    }

    @Test
    void concurrencyGlobalCapHoldsUnderRaces() throws Exception {
        ConcurrencyLimiter c = new ConcurrencyLimiter(0, 50);
        AtomicInteger ok = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 100; i++) {
                    if (c.tryAcquire("k" + id) == ConcurrencyLimiter.Outcome.OK) {
                        ok.incrementAndGet();
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        go.countDown();
        for (Thread th : ts) {
            th.join();
        }
        assertEquals(50, ok.get());
        assertEquals(50, c.total());
    }

    @Test
    void clientAddressTrustsHeaderOnlyFromTrustedPeers() {
        ClientAddress a = new ClientAddress("X-Forwarded-For", "10.0.0.0/8, 192.168.1.1, fd00::/8");
        assertEquals("203.0.113.7", a.resolve("10.1.2.3", "203.0.113.7"));
        assertEquals("203.0.113.7", a.resolve("192.168.1.1", "198.51.100.1, 203.0.113.7, 10.9.9.9"),
                "rightmost untrusted hop; the client-written left part is not believed");
        assertEquals("192.168.1.2", a.resolve("192.168.1.2", "203.0.113.7"), "untrusted peer: header ignored");
        assertEquals("10.1.2.3", a.resolve("10.1.2.3", null));
        assertEquals("10.5.5.5", a.resolve("10.1.2.3", "10.5.5.5, 10.6.6.6"), "all hops trusted: the leftmost");
        assertEquals("10.1.2.3", a.resolve("10.1.2.3", "not-an-ip"), "garbage: the peer");
        assertEquals("2001:db8::1", a.resolve("fd12::5", "2001:db8::1"));
        assertFalse(a.isTrusted("11.0.0.1"));
        assertTrue(a.isTrusted("10.255.255.255"));
    }

    @Test
    void clientAddressWithoutProxiesNeverReadsHeaders() {
        ClientAddress a = new ClientAddress("X-Forwarded-For", "");
        assertEquals(null, a.header());
        assertEquals("127.0.0.1", a.resolve("127.0.0.1", "203.0.113.7"));
    }

    @Test
    void clientAddressRejectsBadProxyEntriesAndNeverResolvesNames() {
        assertThrows(IllegalArgumentException.class, () -> new ClientAddress("X-Forwarded-For", "proxy.example.org"));
        assertThrows(IllegalArgumentException.class, () -> new ClientAddress("X-Forwarded-For", "10.0.0.0/33"));
        assertThrows(IllegalArgumentException.class, () -> new ClientAddress("X-Forwarded-For", "10.0.0/8"));
        assertEquals(null, ClientAddress.literal("localhost"));
        assertEquals(null, ClientAddress.literal("1.2.3"));
        assertEquals(null, ClientAddress.literal("1.2.3.256"));
        assertEquals(4, ClientAddress.literal("1.2.3.4").length);
        assertEquals(16, ClientAddress.literal("[::1]").length);
    }

    @Test
    void limitKeysIpv6ByItsSlash64AndIpv4ByAddress() {
        assertEquals("2001:db8:1:2::/64", ClientAddress.limitKey("2001:db8:1:2::1"));
        assertEquals("2001:db8:1:2::/64", ClientAddress.limitKey("[2001:0db8:0001:0002:ffff:ffff:ffff:ffff]"));
        assertEquals("2001:db8:1:3::/64", ClientAddress.limitKey("2001:db8:1:3::1"));
        assertEquals("0:0:0:0::/64", ClientAddress.limitKey("::1"));
        assertEquals("198.51.100.7", ClientAddress.limitKey("198.51.100.7"));
        assertEquals("198.51.100.8", ClientAddress.limitKey("198.51.100.8"));
        assertEquals("198.51.100.7", ClientAddress.limitKey("::ffff:198.51.100.7"), "IPv4-mapped is the IPv4 client");
        assertEquals("not-an-ip", ClientAddress.limitKey("not-an-ip"));
    }
}
