package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RowConverter;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;
import jetstream.feed.VacancyFile;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash tier with the real live consumer: a child ingester JVM subscribes to the simulator
 * running in this JVM (Sync 1.1 verification on, resync getRepo through the dev host map) while a
 * traffic thread advances the simulator, and is {@code kill -9}ed at random points. After each kill,
 * with the child dead: the durable relay cursor never moves back; archive seqs ascend and every gap
 * is a vacancy registered by an earlier open; every row any earlier check saw is still there at the
 * same seq, unchanged (no seq reused, nothing durable lost). At the end the last incarnation
 * catches up and stops gracefully, and every row of every simulator event at or below the durable
 * cursor of each kill was already in the archive at that kill. Rows are compared by their upstream
 * identity: kind, DID, collection, rkey, rev and payload digest (identity/account payloads carry
 * the upstream seq). Default 15 kills within 150 s (the synthetic {@link CrashTierTest} adds
 * 15 more); {@code -Plong} scales with {@code jetstream.crash.runs}.
 */
@Tag("crash")
class LiveCrashTierTest {

    @Test
    void killNineUnderLiveRelayTrafficLosesNoDurableEvent(@TempDir Path dir) throws Exception {
        int runs = Integer.getInteger("jetstream.crash.runs", 50);
        int kills = Math.max(15, runs * 3 / 20);
        long capNanos = (kills >= 150 ? Math.max(Integer.getInteger("jetstream.crash.seconds", 180), 300) : 150)
                * 1_000_000_000L;
        Path data = dir.resolve("data");
        Path log = dir.resolve("child.log");
        Random random = new Random(Long.getLong("jetstream.crash.seed", System.nanoTime()));
        SimConfig cfg = SimConfig.small();
        cfg.seed = 23;
        cfg.replayBuffer = 1_000_000;
        cfg.mixSync = 0.3;
        cfg.mixIdentity = 1;
        cfg.mixAccount = 1;
        Map<String, Integer> firstSeenAt = new HashMap<>();
        Map<Long, FeedFrame.Event> everSeen = new HashMap<>();
        List<Long> durableCursorAtKill = new ArrayList<>();
        List<java.util.Set<Long>> heldAtKill = new ArrayList<>();
        AtomicBoolean traffic = new AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicLong lastDurable = new java.util.concurrent.atomic.AtomicLong();
        long started = System.nanoTime();
        try (Simulator sim = Simulator.start(cfg)) {
            // live traffic throughout, ahead of the durable cursor by at most a bounded backlog, so each
            // incarnation has relay events to consume and the last one can catch up whatever the box's load
            Thread producer = new Thread(() -> {
                while (traffic.get()) {
                    if (sim.headSeq() - lastDurable.get() < 1_500) {
                        sim.advance(1 + random.nextInt(8));
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "sim-traffic");
            producer.setDaemon(true);
            int done = 0;
            try {
                // a fresh directory has no relay cursor and subscribes at the live tip: the first incarnation
                // starts the traffic once it listens and stops gracefully once it consumed some, leaving a
                // durable cursor that every later incarnation resumes from
                try (ChildProcess child = new ChildProcess(LiveIngesterChild.class, log, data.toString(), sim.url(), "32")) {
                    child.await("READY", 60);
                    child.await("CONNECTED", 60);
                    producer.start();
                    long deadline = System.nanoTime() + 60_000_000_000L;
                    long cursor = -1;
                    while (cursor < 1 && System.nanoTime() < deadline) {
                        Thread.sleep(100);
                        child.send("cursor");
                        cursor = Long.parseLong(child.await("CURSOR", 30).substring("CURSOR ".length()));
                    }
                    child.send("stop");
                    child.await("CLOSED", 30);
                    assertEquals(0, child.process.waitFor());
                }
                long seeded = durableCursor(data);
                assertTrue(seeded >= 1, "the first incarnation left no durable relay cursor");
                lastDurable.set(seeded);
                for (; done < kills && System.nanoTime() - started < capNanos; done++) {
                    long t0 = System.nanoTime();
                    long t1;
                    long t2;
                    try (ChildProcess child = new ChildProcess(LiveIngesterChild.class, log, data.toString(), sim.url(), "32")) {
                        child.await("READY", 60);
                        t1 = System.nanoTime();
                        child.await("CONNECTED", 60);
                        t2 = System.nanoTime();

                        Thread.sleep(200 + random.nextInt(1300));
                        child.kill();
                    }
                    long t3 = System.nanoTime();
                    long cursor = durableCursor(data);
                    if (!durableCursorAtKill.isEmpty()) {
                        long prev = durableCursorAtKill.get(durableCursorAtKill.size() - 1);
                        assertTrue(cursor >= prev, "durable relay cursor went back from " + prev + " to " + cursor);
                    }
                    durableCursorAtKill.add(cursor);
                    heldAtKill.add(heldSeqs(data));
                    lastDurable.set(Math.max(0, cursor));
                    check(data, done, firstSeenAt, everSeen);
                    System.out.printf("kill %d: ready %d ms, connected %d ms, killed %d ms, checked %d ms, cursor %d, head %d%n",
                            done, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000,
                            (System.nanoTime() - t3) / 1_000_000, cursor, sim.headSeq());
                }
            } finally {
                traffic.set(false);
                producer.join();
            }
            try (ChildProcess child = new ChildProcess(LiveIngesterChild.class, log, data.toString(), sim.url(), "32")) {
                child.await("READY", 60);
                child.await("CONNECTED", 60);
                long deadline = System.nanoTime() + 120_000_000_000L;
                long cursor = -1;
                while (cursor < sim.headSeq() && System.nanoTime() < deadline) {
                    child.send("cursor");
                    cursor = Long.parseLong(child.await("CURSOR", 30).substring("CURSOR ".length()));
                    Thread.sleep(100);
                }
                assertEquals(sim.headSeq(), cursor, "the last incarnation caught up with the relay");
                child.send("stop");
                child.await("CLOSED", 30);
                assertEquals(0, child.process.waitFor());
            }
            durableCursorAtKill.add(durableCursor(data));
            heldAtKill.add(heldSeqs(data));
            check(data, done, firstSeenAt, everSeen);
            assertEquals(sim.headSeq(), durableCursorAtKill.get(durableCursorAtKill.size() - 1));
            NavigableMap<Long, byte[]> frames = SimFrames.all(sim);
            int checkedRows = verifyNothingDurableLost(frames, durableCursorAtKill, heldAtKill, firstSeenAt);
            assertTrue(done >= Math.min(15, kills), "only " + done + " kill points in the time cap; see " + log);
            System.out.printf("live crash tier: %d kills, %d relay events, %d rows checked, %d archived, %d vacancies%n",
                    done, frames.size(), checkedRows, everSeen.size(), VacancyFile.load(data).size());
        }
    }

    /** The durable {@code relay/cursor} of a dead child (-1 before any). */
    private static long durableCursor(Path data) {
        try (MetaStore store = MetaStore.open(data)) {
            return MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR));
        }
    }

    /** Seq order, registered gaps, and no row ever seen changed or vanished; records when each row first appeared. */
    private static void check(Path data, int check, Map<String, Integer> firstSeenAt, Map<Long, FeedFrame.Event> everSeen)
            throws Exception {
        List<FeedFrame.Event> disk = ArchiveScan.events(data);
        List<Vacancy> vacancies = VacancyFile.load(data);
        Map<Long, FeedFrame.Event> bySeq = new HashMap<>();
        long prev = 0;
        for (FeedFrame.Event e : disk) {
            assertTrue(e.seq() > prev, "archive seq " + e.seq() + " after " + prev);
            assertTrue(VacancyFile.explains(vacancies, prev, e.seq()),
                    "unregistered hole between " + prev + " and " + e.seq() + " (vacancies " + vacancies + ")");
            bySeq.put(e.seq(), e);
            firstSeenAt.putIfAbsent(key(e.kind(), e.did(), e.collection(), e.rkey(), e.rev(), e.payload()), check);
            prev = e.seq();
        }
        for (Map.Entry<Long, FeedFrame.Event> s : everSeen.entrySet()) {
            assertEquals(s.getValue(), bySeq.get(s.getKey()), "seq " + s.getKey() + " changed or vanished after check " + check);
        }
        everSeen.putAll(bySeq);
    }

    /**
     * The upstream seqs a dead child holds durably (a pending DID's held events and the {@code #sync}
     * a pending resync was started by): below the durable cursor but archived only once released.
     */
    private static java.util.Set<Long> heldSeqs(Path data) {
        java.util.Set<Long> held = new java.util.HashSet<>();
        FrameDecoder decoder = new FrameDecoder();
        try (MetaStore store = MetaStore.open(data)) {
            store.forEach("sync/held/", (key, value) -> {
                String k = new String(key, java.nio.charset.StandardCharsets.US_ASCII);
                held.add(Long.parseLong(k.substring(k.lastIndexOf('/') + 1)));
            });
            store.forEach("sync/resync/", (key, value) -> {
                if (value.length > 2 && value[1] == 2) {
                    held.add(decoder.decode(java.util.Arrays.copyOfRange(value, 2, value.length)).seq());
                }
            });
        }
        return held;
    }

    /**
     * Every row of every relay event at or below a kill's durable cursor was in the archive by that
     * kill's check, or durably held at it (and archived later).
     */
    private static int verifyNothingDurableLost(NavigableMap<Long, byte[]> frames, List<Long> cursors,
                                                List<java.util.Set<Long>> held, Map<String, Integer> firstSeenAt)
            throws Exception {
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        int checked = 0;
        for (Map.Entry<Long, byte[]> f : frames.entrySet()) {
            long seq = f.getKey();
            int due = 0;
            while (cursors.get(due) < seq) {
                due++;
            }
            FirehoseMessage m = decoder.decode(f.getValue());
            for (ArchiveRow r : converter.convert(m).rows()) {
                byte[] p = new byte[r.payload().length()];
                System.arraycopy(r.payload().buffer(), r.payload().offset(), p, 0, p.length);
                Integer at = firstSeenAt.get(key(r.kind(), bytes(r.did()), bytes(r.collection()), bytes(r.rkey()),
                        bytes(r.rev()), p));
                assertTrue(at != null, "relay event " + seq + " (" + r.did() + " " + r.rev() + ") never archived");
                assertTrue(at <= due || held.get(due).contains(seq), "relay event " + seq
                        + " was at or below the durable cursor " + cursors.get(due)
                        + " at check " + due + " but reached the archive only by check " + at);
                checked++;
            }
        }
        assertTrue(checked > 0, "no relay rows");
        return checked;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String key(int kind, byte[] did, byte[] coll, byte[] rkey, byte[] rev, byte[] payload) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(payload);
        return kind + "|" + new String(did, StandardCharsets.UTF_8) + "|" + new String(coll, StandardCharsets.UTF_8) + "|"
                + new String(rkey, StandardCharsets.UTF_8) + "|" + new String(rev, StandardCharsets.UTF_8) + "|"
                + HexFormat.of().formatHex(digest);
    }
}
