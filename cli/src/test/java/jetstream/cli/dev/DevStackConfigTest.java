package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The dev stack's configuration: its defaults, the port plan, where each process listens, the builder's round trip and its checks. */
@Tag("unit")
class DevStackConfigTest {

    @Test
    void defaultsAreThoseOfDevUp(@TempDir Path root) {
        DevStackConfig c = DevStackConfig.builder(root).build();
        assertEquals(root.toAbsolutePath(), c.root());
        assertEquals(root.toAbsolutePath().resolve("data-dev"), c.dataDir());
        assertEquals("127.0.0.1", c.host());
        assertEquals(6008, c.frontPort());
        assertEquals(6100, c.basePort());
        assertEquals(List.of(), c.simulatorArgs());
        assertEquals(Map.of(), c.extraEnv());
        assertEquals("http://127.0.0.1:6008", c.frontUrl());
        assertEquals("http://127.0.0.1:6100", c.simUrl());
    }

    @Test
    void thePortPlanCountsFromTheBasePort(@TempDir Path root) {
        DevStackConfig c = DevStackConfig.builder(root).basePort(7000).build();
        assertEquals(List.of(7000, 7001, 7002, 7003, 7004, 7005, 7006, 7007, 7008),
                List.of(c.simPort(), c.ingesterPort(), c.archivePort(), c.archiveManagementPort(), c.gatewayPort(0),
                        c.gatewayPort(1), c.ingesterManagementPort(), c.gatewayManagementPort(0),
                        c.gatewayManagementPort(1)));
    }

    @Test
    void devUpWithoutFlagsBuildsTheDefaultsPlusTheDemoProfile(@TempDir Path root) {
        DevCommand cmd = new DevCommand();
        new CommandLine(cmd).parseArgs("up");
        DevStackConfig fromCli = cmd.config(root);
        DevStackConfig defaults = DevStackConfig.builder(root).simulatorArgs(List.of("--profile", "demo")).build();
        assertSameFields(defaults, fromCli);
    }

    @Test
    void devUpFlagsReachTheConfig(@TempDir Path root) {
        DevCommand cmd = new DevCommand();
        new CommandLine(cmd).parseArgs("up", "--port", "7008", "--base-port", "7100", "--host", "127.0.0.2",
                "--data-dir", root.resolve("d").toString(), "--profile", "small", "--sim", "seed", "9",
                "--gateways", "remote");
        DevStackConfig c = cmd.config(root);
        assertEquals(7008, c.frontPort());
        assertEquals(7100, c.basePort());
        assertEquals("127.0.0.2", c.host());
        assertEquals(root.resolve("d").toAbsolutePath(), c.dataDir());
        assertEquals(List.of("--profile", "small", "--seed", "9"), c.simulatorArgs());
        assertEquals("127.0.0.2:7109", c.extraEnv().get("ingester").get("JETSTREAM_FEED_TCP_ADDR"));
        assertEquals(root.resolve("d/remote-gateway-b").toAbsolutePath().toString(),
                c.extraEnv().get("gateway-b").get("JETSTREAM_DATA_DIR"));
    }

    @Test
    void toBuilderRoundTripsEveryField(@TempDir Path root) {
        DevStackConfig c = DevStackConfig.builder(root).dataDir(root.resolve("elsewhere")).host("127.0.0.3")
                .frontPort(9008).basePort(9100).simulatorArgs(List.of("--profile", "small"))
                .env("ingester", Map.of("JETSTREAM_INGEST_BLOCK_AGE", "1s"))
                .env("gateway-b", Map.of("JETSTREAM_CURSOR_LOOKBACK", "1s"))
                .gatewayBNamespace(new DevStackConfig.Netns("ns1", "10.213.0.1", "10.213.0.2")).build();
        assertSameFields(c, c.toBuilder().build());

        DevStackConfig moved = c.toBuilder().basePort(9200).build();
        assertEquals(9200, moved.basePort());
        assertSameFields(c, moved.toBuilder().basePort(9100).build());
    }

    @Test
    void envAddsPerProcessAndLaterValuesWin(@TempDir Path root) {
        DevStackConfig c = DevStackConfig.builder(root)
                .env("ingester", Map.of("A", "1", "B", "1"))
                .extraEnv(Map.of("ingester", Map.of("B", "2"), "archive", Map.of("C", "3")))
                .build();
        assertEquals(Map.of("A", "1", "B", "2"), c.extraEnv().get("ingester"));
        assertEquals(Map.of("C", "3"), c.extraEnv().get("archive"));
    }

    @Test
    void theConfigIsACopyOfWhatTheBuilderWasGiven(@TempDir Path root) {
        List<String> args = new ArrayList<>(List.of("--profile", "small"));
        Map<String, String> vars = new HashMap<>(Map.of("A", "1"));
        DevStackConfig.Builder b = DevStackConfig.builder(root).simulatorArgs(args).env("ingester", vars);
        DevStackConfig c = b.build();
        args.add("--seed");
        vars.put("A", "2");
        b.basePort(9100).env("ingester", Map.of("A", "3"));
        assertEquals(List.of("--profile", "small"), c.simulatorArgs());
        assertEquals(Map.of("A", "1"), c.extraEnv().get("ingester"));
        assertEquals(6100, c.basePort());
        assertThrows(UnsupportedOperationException.class, () -> c.simulatorArgs().add("x"));
        assertThrows(UnsupportedOperationException.class, () -> c.extraEnv().get("ingester").put("A", "4"));
    }

    @Test
    void withoutANamespaceEveryListenerIsOnTheHost(@TempDir Path root) {
        DevStackConfig c = DevStackConfig.builder(root).host("127.0.0.2").build();
        assertEquals(Optional.empty(), c.gatewayBNamespace());
        assertEquals(List.of("127.0.0.2", "127.0.0.2", "127.0.0.2"), List.of(c.gatewayHost(0), c.gatewayHost(1),
                c.archiveHost()));
    }

    @Test
    void aNamespacedGatewayBListensInItsNamespaceAndReachesTheArchiveAcrossTheVeth(@TempDir Path root) throws Exception {
        DevStackConfig.Netns ns = new DevStackConfig.Netns("jsgw1", "10.213.7.1", "10.213.7.2");
        DevStackConfig c = DevStackConfig.builder(root).basePort(7100).gatewayBNamespace(ns).build();
        assertEquals(List.of("127.0.0.1", "10.213.7.2", "10.213.7.1"), List.of(c.gatewayHost(0), c.gatewayHost(1),
                c.archiveHost()));
        DevStack s = DevStack.create(c);
        List<String> b = s.command("gateway-b");
        assertEquals(List.of("ip", "netns", "exec", "jsgw1"), b.subList(0, 4));
        assertTrue(b.get(4).endsWith("java"), b.toString());
        assertTrue(s.command("gateway-a").get(0).endsWith("java"), "gateway-a stays in the root namespace");
        Map<String, String> envB = s.environment("gateway-b");
        assertEquals("10.213.7.2", envB.get("QUARKUS_HTTP_HOST"));
        assertEquals("10.213.7.2", envB.get("QUARKUS_MANAGEMENT_HOST"));
        // the front door reaches gateway-b from the root end of the veth
        assertEquals("10.213.7.1", envB.get("JETSTREAM_TRUSTED_PROXIES"));
        assertEquals("127.0.0.1", s.environment("gateway-a").get("QUARKUS_HTTP_HOST"));
        assertEquals("10.213.7.1", s.environment("archive").get("QUARKUS_HTTP_HOST"));
        assertEquals("127.0.0.1", s.environment("archive").get("QUARKUS_MANAGEMENT_HOST"));
        assertEquals("http://10.213.7.2:7108/q/health/ready", s.readyUrl("gateway-b"));
        List<String> door = s.command("frontdoor");
        assertTrue(door.contains("10.213.7.1:7102") && door.contains("10.213.7.2:7105"), door.toString());
        assertThrows(IllegalArgumentException.class, () -> new DevStackConfig.Netns("jsgw1", " ", "10.213.7.2"));
    }

    @Test
    void buildRefusesWhatCannotRun(@TempDir Path root) {
        assertRefused(DevStackConfig.builder(root).host(" "), "host");
        assertRefused(DevStackConfig.builder(root).frontPort(0), "front port 0");
        assertRefused(DevStackConfig.builder(root).frontPort(65536), "front port 65536");
        assertRefused(DevStackConfig.builder(root).basePort(-1), "base port -1");
        // the base port's span (+0 … +9) must fit below 65536
        assertRefused(DevStackConfig.builder(root).basePort(65530), "base port + 9 65539");
        DevStackConfig.builder(root).basePort(65526).build();
        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class,
                () -> DevStackConfig.builder(root).env("gateway", Map.of("A", "1")));
        assertTrue(typo.getMessage().contains("no process gateway"), typo.getMessage());
    }

    private static void assertRefused(DevStackConfig.Builder b, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    /** Every field equal (the configuration is compared by what it holds). */
    private static void assertSameFields(DevStackConfig expected, DevStackConfig actual) {
        assertEquals(expected.root(), actual.root());
        assertEquals(expected.dataDir(), actual.dataDir());
        assertEquals(expected.host(), actual.host());
        assertEquals(expected.frontPort(), actual.frontPort());
        assertEquals(expected.basePort(), actual.basePort());
        assertEquals(expected.simulatorArgs(), actual.simulatorArgs());
        assertEquals(expected.extraEnv(), actual.extraEnv());
        assertEquals(expected.gatewayBNamespace(), actual.gatewayBNamespace());
    }
}
