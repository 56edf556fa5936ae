package jetstream.ingester.writer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import jetstream.feed.Vacancy;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SeqLeaseTest {

    @Test
    void freshStoreStartsAtOneWithALease(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            SeqLease l = SeqLease.open(store, 0, 16);
            assertNull(l.registered());
            assertEquals(1, l.allocate());
            assertEquals(2, l.allocate());
            assertEquals(17, MetaKeys.readU64le("", store.get(MetaKeys.SEQ_MAX_RESERVED)));
        }
    }

    @Test
    void gracefulCloseLeavesNoVacancy(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            SeqLease l = SeqLease.open(store, 0, 16);
            for (int i = 0; i < 5; i++) {
                l.allocate();
            }
            try (MetaStore.Batch b = store.batch()) {
                l.stageBlock(b, 5);
                b.commit();
            }
            l.collapse();
            SeqLease again = SeqLease.open(store, 5, 16);
            assertNull(again.registered());
            assertEquals(6, again.allocate());
            assertEquals(List.of(), again.vacancies());
        }
    }

    @Test
    void crashRegistersTheAbandonedLeaseAndNeverReusesASeq(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            SeqLease l = SeqLease.open(store, 0, 16);
            for (int i = 0; i < 20; i++) {
                l.allocate(); // crosses the lease: extended synchronously
            }
            long reserved = MetaKeys.readU64le("", store.get(MetaKeys.SEQ_MAX_RESERVED));
            assertTrue(reserved > 20, "lease " + reserved + " covers every allocated seq");
            // crash: seqs 1..7 reached disk, nothing was committed
            SeqLease after = SeqLease.open(store, 7, 16);
            Vacancy v = after.registered();
            assertEquals(new Vacancy(8, reserved, Vacancy.Reason.ABANDONED_LEASE), v);
            assertEquals(reserved, after.allocate());
            assertEquals(List.of(v), after.vacancies());
            assertEquals(reserved, MetaKeys.readU64le("", store.get(MetaKeys.SEQ_NEXT)));
            // a second crash before seq `reserved` reached disk abandons the fresh lease, from that seq on
            SeqLease third = SeqLease.open(store, 0, 16);
            assertEquals(2, third.vacancies().size());
            assertEquals(new Vacancy(reserved, reserved + 16, Vacancy.Reason.ABANDONED_LEASE), third.registered());
            assertEquals(reserved + 16, third.allocate());
        }
    }
}
