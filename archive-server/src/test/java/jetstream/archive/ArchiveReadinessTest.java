package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Readiness follows the first manifest load: down while it runs (the loader is held on the store's
 * monitor, as a long load holds it), up once it finished, with the load's progress as data; a
 * failed first load stays down.
 */
@Tag("unit")
class ArchiveReadinessTest {
    @Test
    void notReadyUntilTheManifestIsLoaded() throws Exception {
        Path data = Path.of("target/test-data-readiness").toAbsolutePath();
        TestArchive.clear(data);
        Path segments = Files.createDirectories(data.resolve("segments"));
        TestArchive.writeSegment(segments, 1, 1, 200, 50, 0);
        TestArchive.writeSegment(segments, 2, 201, 400, 50, 0);
        TestArchive.writeSegment(segments, 3, 401, 600, 50, 0);
        ManifestStore store = new ManifestStore(segments, new SimpleMeterRegistry());
        assertEquals(HealthCheckResponse.Status.DOWN, ArchiveReadiness.check(null).getStatus(), "no store yet");
        Thread loader;
        synchronized (store) {
            loader = new Thread(store::initialLoad, "test-manifest-load");
            loader.start();
            Thread.sleep(200);
            HealthCheckResponse loading = ArchiveReadiness.check(store);
            assertEquals(HealthCheckResponse.Status.DOWN, loading.getStatus());
            assertEquals(-1L, loading.getData().orElseThrow().get("segmentsFound"));
            assertEquals(0L, loading.getData().orElseThrow().get("segmentsLoaded"));
        }
        store.loaded().get(30, TimeUnit.SECONDS);
        loader.join();
        HealthCheckResponse ready = ArchiveReadiness.check(store);
        assertEquals(HealthCheckResponse.Status.UP, ready.getStatus());
        assertEquals(3L, ready.getData().orElseThrow().get("segmentsFound"));
        assertEquals(3L, ready.getData().orElseThrow().get("segmentsLoaded"));
        assertEquals(3, store.manifest().segments().size());
    }

    @Test
    void aFailedFirstLoadIsNotReady() {
        ManifestStore store = new ManifestStore(Path.of("target/none"), new SimpleMeterRegistry());
        store.loaded().completeExceptionally(new java.io.IOException("disk gone"));
        assertEquals(HealthCheckResponse.Status.DOWN, ArchiveReadiness.check(store).getStatus());
    }
}
