package jetstream.ingester.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A use of the store after or during its close fails in Java; on a freed RocksDB handle it would crash the JVM. */
@Tag("unit")
class MetaStoreCloseTest {
    @TempDir
    Path dir;

    @Test
    void everyOperationAfterCloseIsRefused() {
        MetaStore store = MetaStore.open(dir);
        try (MetaStore.Batch b = store.batch()) {
            b.put("k", new byte[] {1}).commit();
        }
        store.close();
        store.close();
        assertThrows(IllegalStateException.class, () -> store.get("k"));
        assertThrows(IllegalStateException.class, () -> store.page("k", null, 10));
        try (MetaStore.Batch b = store.batch()) {
            b.put("k", new byte[] {2});
            assertThrows(IllegalStateException.class, b::commit);
        }
        try (MetaStore reopened = MetaStore.open(dir)) {
            assertArrayEquals(new byte[] {1}, reopened.get("k"));
        }
    }

    @Test
    void aWriterRacingTheCloseNeverReachesAFreedHandle() throws Exception {
        MetaStore store = MetaStore.open(dir);
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; ; i++) {
                    try (MetaStore.Batch b = store.batch()) {
                        b.put("w/" + i, ("v" + i).getBytes(StandardCharsets.UTF_8)).commit();
                    }
                    store.get("w/" + i);
                    started.countDown();
                }
            } catch (Throwable t) {
                ended.set(t);
            }
        });
        writer.start();
        assertTrue(started.await(30, java.util.concurrent.TimeUnit.SECONDS));
        store.close();
        writer.join(30_000);
        assertTrue(ended.get() instanceof IllegalStateException, "the writer stopped on the closed store: " + ended.get());
    }
}
