package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import jetstream.ingester.backfill.BackfillSettings.UpstreamMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The named builder of {@link BackfillSettings}: defaults, one setter per field, validation at build. */
@Tag("unit")
class BackfillSettingsTest {
    private static final String URL = "http://127.0.0.1:2583";
    private static final String DID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";

    @Test
    void defaultsAreTheReferenceFlags() {
        BackfillSettings d = BackfillSettings.defaults(URL);
        assertEquals(URL, d.upstreamUrl());
        assertEquals(UpstreamMode.AUTO, d.upstreamMode());
        assertEquals(false, d.allowLoopback());
        assertEquals(256, d.globalDownloads());
        assertEquals(32, d.hostWorkersMax());
        assertEquals(512, d.maxActiveHosts());
        assertEquals(50_000, d.maxHosts());
        assertEquals(5000, d.batchSize());
        assertEquals(List.of(), d.backfillRepos());
        assertEquals(0, d.maxBackfillRepos());
        assertEquals(Duration.ofHours(4), d.retryInterval());
        assertEquals(16, d.retryWorkers());
        assertEquals(4, d.retryHostWorkers());
        assertEquals(Duration.ofHours(168), d.retryMaxDelay());
        assertEquals(Duration.ofSeconds(30), d.checkpointInterval());
        assertEquals(Duration.ofSeconds(30), d.hostRetryDelay());
        assertEquals(Duration.ofSeconds(10), d.progressInterval());
        assertEquals(512L << 20, d.maxInflightBytes());
        assertEquals(64L << 20, d.spoolThresholdBytes());
        assertEquals(512L << 20, d.maxCarBytes());
    }

    @Test
    void everySetterSetsItsOwnField() {
        BackfillSettings s = BackfillSettings.builder(URL).upstreamMode(UpstreamMode.PDS).allowLoopback(true)
                .globalDownloads(3).hostWorkersMax(5).maxActiveHosts(7).maxHosts(11).batchSize(13)
                .backfillRepos(List.of(DID)).retryInterval(Duration.ofMinutes(17)).retryWorkers(19)
                .retryHostWorkers(23).retryMaxDelay(Duration.ofMinutes(29)).checkpointInterval(Duration.ofSeconds(31))
                .hostRetryDelay(Duration.ofSeconds(37)).progressInterval(Duration.ofSeconds(41)).maxInflightBytes(43)
                .spoolThresholdBytes(47).maxCarBytes(53).build();
        assertEquals(new BackfillSettings(URL, UpstreamMode.PDS, true, 3, 5, 7, 11, 13, List.of(DID), 0,
                Duration.ofMinutes(17), 19, 23, Duration.ofMinutes(29), Duration.ofSeconds(31), Duration.ofSeconds(37),
                Duration.ofSeconds(41), 43, 47, 53), s);
        assertEquals(s, s.toBuilder().build(), "toBuilder keeps every field");
        BackfillSettings capped = BackfillSettings.builder(URL).maxBackfillRepos(59).build();
        assertEquals(59, capped.maxBackfillRepos());
        assertEquals(capped, capped.toBuilder().build());
    }

    @Test
    void withCarBudgetChangesOnlyTheBudget() {
        BackfillSettings s = BackfillSettings.builder(URL).globalDownloads(3).build();
        BackfillSettings t = s.withCarBudget(1 << 20, 2 << 10);
        assertEquals(1 << 20, t.maxInflightBytes());
        assertEquals(2 << 10, t.spoolThresholdBytes());
        assertNotEquals(s, t);
        assertEquals(s, t.withCarBudget(s.maxInflightBytes(), s.spoolThresholdBytes()));
    }

    @Test
    void invalidValuesFailAtBuildNamingTheirVariable() {
        assertMessage("JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS", BackfillSettings.builder(URL).globalDownloads(0));
        assertMessage("JETSTREAM_FAILED_REPO_RETRY_WORKERS", BackfillSettings.builder(URL).retryWorkers(-1));
        assertMessage("JETSTREAM_MAX_CAR_BYTES", BackfillSettings.builder(URL).maxCarBytes(0));
        assertMessage("mutually exclusive", BackfillSettings.builder(URL).backfillRepos(List.of(DID)).maxBackfillRepos(1));
        assertMessage("http:// or https://", BackfillSettings.builder("ws://127.0.0.1:1"));
        assertEquals(5000, BackfillSettings.builder(URL).batchSize(0).build().batchSize(), "0 means the default");
    }

    @Test
    void theInflightBudgetTakesAtMostAQuarterOfTheHeap() {
        BackfillSettings d = BackfillSettings.builder("https://relay.example").build();
        assertEquals(512L << 20, d.maxInflightBytes());
        assertEquals(256L << 20, d.inflightBytesFor(1L << 30), "-Xmx1g");
        assertEquals(512L << 20, d.inflightBytesFor(4L << 30), "the chart's 4 GiB heap keeps the setting");
        assertEquals(64L << 20, d.withCarBudget(64L << 20, 1L << 20).inflightBytesFor(1L << 30), "a smaller setting is kept");
    }

    private static void assertMessage(String part, BackfillSettings.Builder b) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
