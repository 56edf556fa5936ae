package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class HostnamePolicyTest {
    private static final HostnamePolicy STRICT = new HostnamePolicy(false);
    private static final HostnamePolicy DEV = new HostnamePolicy(true);

    /** {input, strict verdict (null = accepted), verdict with the loopback dev flag}. */
    private static final String[][] TABLE = {
            {"morel.us-east.host.bsky.network", null, null},
            {"PDS.Example.COM", null, null},
            {"bsky.social", null, null},
            {"xn--bcher-kva.example.org", null, null},
            {"a1-b2.c3", null, null},
            {"", "empty", "empty"},
            {"a".repeat(300) + ".example.com", "too_long", "too_long"},
            {"a".repeat(64) + ".example.com", "label_too_long", "label_too_long"},
            {"-bad-.example.com", "bad_syntax", "bad_syntax"},
            {"bad-.example.com", "bad_syntax", "bad_syntax"},
            {"under_score.example.com", "bad_syntax", "bad_syntax"},
            {"pds.example.com.", "bad_syntax", "bad_syntax"},
            {".pds.example.com", "bad_syntax", "bad_syntax"},
            {"pds..example.com", "bad_syntax", "bad_syntax"},
            {"user@pds.example.com", "bad_syntax", "bad_syntax"},
            {"pds.example.com/path", "bad_syntax", "bad_syntax"},
            {"pds.exämple.com", "bad_syntax", "bad_syntax"},
            {"pds.example.com:443", "port", "port"},
            {"pds-0.sim.test:22", "port", "port"},
            {"127.0.0.1", "loopback", null},
            {"127.1.2.3", "loopback", null},
            {"127.1", "ip_literal", "ip_literal"},
            {"2130706433", "ip_literal", "ip_literal"},
            {"0x7f.0.0.1", "ip_literal", "ip_literal"},
            {"0177.0.0.1", "ip_literal", "ip_literal"},
            {"8.8.8.8", "ip_literal", "ip_literal"},
            {"10.0.0.7", "private", "private"},
            {"172.16.4.1", "private", "private"},
            {"192.168.1.20", "private", "private"},
            {"169.254.169.254", "link_local", "link_local"},
            {"100.64.0.1", "cgnat", "cgnat"},
            {"100.127.255.254", "cgnat", "cgnat"},
            {"0.0.0.0", "ip_literal", "ip_literal"},
            {"[::1]", "loopback", null},
            {"::1", "loopback", null},
            {"[fe80::1]", "link_local", "link_local"},
            {"[fd00::1]", "private", "private"},
            {"[2001:db8::1]", "ip_literal", "ip_literal"},
            {"[::ffff:10.0.0.1]", "private", "private"},
            {"[::1]:8080", "port", "port"},
            {"[fe80::1%eth0]", "bad_syntax", "bad_syntax"},
            {"localhost", "loopback", null},
            {"pds.localhost", "loopback", null},
            {"intranet", "single_label", "single_label"},
            {"metadata.google.internal", "special_use", "special_use"},
            {"printer.local", "special_use", "special_use"},
            {"pds-0.sim.test", "special_use", "special_use"},
            {"x.example", "special_use", "special_use"},
            {"router.home.arpa", "special_use", "special_use"},
            {"abc.onion", "special_use", "special_use"},
    };

    @Test
    void verdictTable() {
        for (String[] row : TABLE) {
            assertEquals(row[1], STRICT.check(row[0]).reason(), "strict: " + row[0]);
            assertEquals(row[2], DEV.check(row[0]).reason(), "allow-loopback: " + row[0]);
        }
        assertEquals("pds.example.com", STRICT.check("PDS.Example.COM").hostname());
        assertNull(STRICT.check(null).hostname());
    }

    @Test
    void everySimulatorHostileNameIsRejectedWithoutTheDevFlag() {
        for (String h : new String[] {"127.0.0.1", "localhost", "10.0.0.7", "192.168.1.20", "169.254.169.254", "[::1]",
                "pds.localhost", "0x7f.0.0.1", "a".repeat(300) + ".example.com", "metadata.google.internal",
                "pds-0.sim.test:22", "-bad-.example.com"}) {
            assertEquals(false, STRICT.check(h).accepted(), h);
        }
    }

    @Test
    void redirectTargetsPassTheSameRules() {
        Upstream up = new Upstream("http://127.0.0.1:5000",
                url -> url.equals("https://pds-0.sim.test") ? "http://127.0.0.1:5001" : url);
        java.util.function.Predicate<String> ok = u -> RepoTransport.redirectTargetAllowed(STRICT, up,
                java.net.URI.create(u));
        assertEquals(true, ok.test("http://127.0.0.1:5000/xrpc/com.atproto.sync.getRepo"), "the upstream itself");
        assertEquals(true, ok.test("https://pds-0.sim.test/xrpc/com.atproto.sync.getRepo"), "a dev-routed host");
        for (String bad : new String[] {"http://169.254.169.254/latest/meta-data", "http://127.0.0.1/x",
                "https://[::1]/x", "https://pds.localhost/x", "https://10.0.0.1/x", "https://pds.example.com:8443/x",
                "https://metadata.google.internal/x", "http://127.0.0.1:5001/x"}) {
            assertEquals(false, ok.test(bad), bad);
        }
    }

    @Test
    void resolvedAddressesMustBePublic() throws Exception {
        InetAddress pub = InetAddress.getByName("93.184.216.34");
        InetAddress priv = InetAddress.getByName("10.1.2.3");
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        InetAddress cgnat = InetAddress.getByName("100.100.1.1");
        assertNull(STRICT.checkAddresses(new InetAddress[] {pub}));
        assertEquals("private", STRICT.checkAddresses(new InetAddress[] {pub, priv}));
        assertEquals("loopback", STRICT.checkAddresses(new InetAddress[] {lo}));
        assertNull(DEV.checkAddresses(new InetAddress[] {lo}));
        assertEquals("cgnat", DEV.checkAddresses(new InetAddress[] {cgnat}));
    }

    /** The first listHosts answer that switches auto mode to direct-PDS: 501 (our simulator), 401 (the reference PDS). */
    @Test
    void listHostsAnswersThatMeanAPds() {
        assertTrue(Roster.answersLikeAPds(SyncCalls.Answer.of(SyncCalls.Outcome.NOT_IMPLEMENTED, "MethodNotImplemented")));
        assertTrue(Roster.answersLikeAPds(SyncCalls.Answer.of(SyncCalls.Outcome.BAD_RESPONSE, "http 401 AuthMissing")));
        assertFalse(Roster.answersLikeAPds(SyncCalls.Answer.of(SyncCalls.Outcome.BAD_RESPONSE, "http 500 InternalServerError")));
        assertFalse(Roster.answersLikeAPds(SyncCalls.Answer.of(SyncCalls.Outcome.RATE_LIMITED, "RateLimitExceeded")));
        assertFalse(Roster.answersLikeAPds(SyncCalls.Answer.of(SyncCalls.Outcome.BAD_RESPONSE, "io: ConnectException")));
    }
}
