package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;
import jetstream.feed.VacancyFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child ingester under synthetic traffic is {@code kill -9}ed at random points, with a feed reader
 * following it throughout. Afterwards: every event the reader saw at or below a durable watermark
 * is in the archive unchanged; every event it saw is either in the archive unchanged or inside a
 * registered vacancy (no seq reuse); archive seqs ascend and every gap is a registered vacancy.
 * Default 15 kills within 150 s ({@link LiveCrashTierTest} adds 15 under real relay traffic);
 * {@code -Plong} raises {@code jetstream.crash.runs}, 150+ kills here and as many there.
 */
@Tag("crash")
class CrashTierTest {

    @Test
    void killNineUnderTrafficLosesNothingDurableAndNeverReusesASeq(@TempDir Path dir) throws Exception {
        int runs = Integer.getInteger("jetstream.crash.runs", 50);
        // half of the kill points (>= 30 in 5 minutes by default, >= 300 with -Plong); LiveCrashTierTest has the other half
        int kills = Math.max(15, runs * 3 / 20);
        long capNanos = (kills >= 150 ? Math.max(Integer.getInteger("jetstream.crash.seconds", 180), 300) : 150) * 1_000_000_000L;
        Path data = dir.resolve("data");
        Path log = dir.resolve("child.log");
        Random random = new Random(Long.getLong("jetstream.crash.seed", System.nanoTime()));
        long started = System.nanoTime();
        int done = 0;
        int tooOld = 0;
        try (FeedRecorder reader = new FeedRecorder(data.resolve("run").resolve("feed.sock"))) {
            for (; done < kills && System.nanoTime() - started < capNanos; done++) {
                try (ChildProcess child = new ChildProcess(IngesterChild.class, log, data.toString(), "64", "3000")) {
                    child.await("READY", 60);
                    int before = reader.connections;
                    if (done == 0) {
                        reader.start(1);
                    }
                    // kill only once the reader follows this incarnation, so it can see its pending events
                    long wait = System.nanoTime() + 5_000_000_000L;
                    while (reader.connections == before && System.nanoTime() < wait) {
                        Thread.sleep(5);
                    }
                    Thread.sleep(100 + random.nextInt(600));
                    child.kill();
                }
                if (reader.recoverFromTooOld()) {
                    tooOld++;
                }
            }
            try (ChildProcess child = new ChildProcess(IngesterChild.class, log, data.toString(), "64", "3000")) {
                child.await("READY", 60);
                Thread.sleep(300);
                child.send("pause");
                String paused = child.await("PAUSED", 30);
                long last = Long.parseLong(paused.substring("PAUSED ".length()));
                child.send("stop");
                child.await("CLOSED", 30);
                assertEquals(0, child.process.waitFor());
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (reader.lastSeq < last && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            }
            assertTrue(done >= Math.min(15, kills), "only " + done + " kill points in the time cap; see " + log);
            verify(data, reader);
            System.out.printf("crash tier: %d kills, %d events seen, %d vacancies, %d too-old resubscribes%n",
                    done, reader.events.size(), VacancyFile.load(data).size(), tooOld);
        }
    }

    static void verify(Path data, FeedRecorder reader) throws Exception {
        List<FeedFrame.Event> disk = ArchiveScan.events(data);
        List<Vacancy> vacancies = VacancyFile.load(data);
        assertTrue(reader.violations.isEmpty(), reader.violations.toString());
        assertTrue(!disk.isEmpty(), "nothing archived");
        Map<Long, FeedFrame.Event> bySeq = new HashMap<>();
        long prev = 0;
        for (FeedFrame.Event e : disk) {
            assertTrue(e.seq() > prev, "archive seq " + e.seq() + " after " + prev);
            assertTrue(VacancyFile.explains(vacancies, prev, e.seq()),
                    "unregistered hole between " + prev + " and " + e.seq() + " (vacancies " + vacancies + ")");
            bySeq.put(e.seq(), e);
            prev = e.seq();
        }
        for (Vacancy v : reader.vacancies) {
            assertTrue(vacancies.contains(v), "feed announced " + v + " which the vacancy file lacks");
        }
        int checked = 0;
        int confirmed = 0;
        List<FeedFrame.Event> seenAll = reader.snapshot();
        for (int i = 0; i < seenAll.size(); i++) {
            FeedFrame.Event seen = seenAll.get(i);
            FeedFrame.Event d = bySeq.get(seen.seq());
            if (d != null) {
                assertEquals(d, seen, "seq " + seen.seq() + " was reused for a different event");
                checked++;
                if (reader.durable.get(i)) {
                    confirmed++;
                }
            } else {
                assertTrue(vacancies.stream().anyMatch(v -> v.contains(seen.seq())),
                        "seen seq " + seen.seq() + " is neither archived nor in a registered vacancy");
                assertTrue(!reader.durable.get(i), "event " + seen.seq() + " confirmed durable by a watermark was lost");
            }
        }
        assertTrue(checked > 0 && confirmed > 0, "the reader saw no archived event confirmed durable");
        assertTrue(Files.exists(VacancyFile.path(data)));
    }
}
