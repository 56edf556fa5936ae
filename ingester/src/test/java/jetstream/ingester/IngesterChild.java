package jetstream.ingester;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentWriter;

/**
 * A child ingester process for the crash and feed tests: the real core (store, lease, writer, log,
 * feed server) fed by two synthetic producers instead of a relay. Prints {@code READY} when the
 * feed is bound; a {@code stop} line on stdin closes it gracefully and prints {@code CLOSED}.
 * Args: dataDir, eventsPerBlock, rows per second per producer.
 */
public final class IngesterChild {
    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        int perBlock = Integer.parseInt(args[1]);
        int rate = Integer.parseInt(args[2]);
        IngesterCore.Settings s = IngesterCore.Settings.builder(data).steadyOnly().verify(false)
                .segments(new SegmentWriter.Config(perBlock, 64 << 10, Duration.ofMillis(200))).logBudgetBytes(2 << 20)
                .build();
        IngesterCore core = IngesterCore.open(s, new SimpleMeterRegistry(), t -> {
            t.printStackTrace();
            Runtime.getRuntime().halt(70);
        });
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            final int id = p;
            Thread t = new Thread(() -> produce(core.writer(), id, rate), "producer-" + p);
            t.setDaemon(true);
            t.start();
            producers.add(t);
        }
        System.out.println("READY " + core.writer().log().nextSeq());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("stop")) {
            if (line.equals("pause")) {
                running = false;
                for (Thread t : producers) {
                    t.join();
                }
                // an empty submission is processed after every queued row: then the last seq is final
                java.util.concurrent.CountDownLatch drained = new java.util.concurrent.CountDownLatch(1);
                core.writer().submit(new SteadyWriter.Submission(List.of(), Map.of(), drained::countDown));
                drained.await();
                System.out.println("PAUSED " + (core.writer().log().nextSeq() - 1));
                System.out.flush();
            }
        }
        running = false;
        for (Thread t : producers) {
            t.join();
        }
        core.close();
        System.out.println("CLOSED");
        System.out.flush();
        System.exit(0);
    }

    private static volatile boolean running = true;

    private static void produce(SteadyWriter w, int id, int rate) {
        Random r = new Random(System.nanoTime() ^ id);
        long n = 0;
        long start = System.nanoTime();
        while (running) {
            List<ArchiveRow> rows = new ArrayList<>();
            int batch = 1 + r.nextInt(8);
            for (int i = 0; i < batch; i++) {
                byte[] payload = ("p" + id + "-" + n++ + "-" + r.nextLong()).repeat(1 + r.nextInt(6))
                        .getBytes(StandardCharsets.UTF_8);
                rows.add(new ArchiveRow(ArchiveRow.KIND_CREATE, "did:plc:child" + id + r.nextInt(50), "app.bsky.feed.post",
                        "3k" + n, "3lrev" + n, new ByteSlice(payload, 0, payload.length)));
            }
            try {
                w.submit(new SteadyWriter.Submission(rows, Map.of(), null));
                long due = start + n * 1_000_000_000L / rate;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
            } catch (InterruptedException | IllegalStateException e) {
                return;
            }
        }
    }
}
