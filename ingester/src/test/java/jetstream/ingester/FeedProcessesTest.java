package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four reader processes follow the feed of a child ingester through a graceful restart: each sees
 * every archived event, in seq order, exactly once (the client resumes after its last seq).
 */
@Tag("component")
class FeedProcessesTest {

    @Test
    void fourReaderProcessesSeeEveryEventInOrderThroughARestart(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path log = dir.resolve("child.log");
        Path sock = data.resolve("run").resolve("feed.sock");
        List<ChildProcess> readers = new ArrayList<>();
        try {
            ChildProcess ingester = new ChildProcess(IngesterChild.class, log, data.toString(), "128", "2000");
            ingester.await("READY", 60);
            for (int i = 0; i < 4; i++) {
                ChildProcess r = new ChildProcess(FeedReaderChild.class, log, sock.toString(),
                        dir.resolve("reader" + i + ".txt").toString());
                readers.add(r);
            }
            for (ChildProcess r : readers) {
                r.await("STARTED", 60);
            }
            Thread.sleep(1500);
            ingester.send("stop");
            ingester.await("CLOSED", 30);
            assertEquals(0, ingester.process.waitFor());
            Thread.sleep(300);
            ingester = new ChildProcess(IngesterChild.class, log, data.toString(), "128", "2000");
            ingester.await("READY", 60);
            Thread.sleep(1500);
            ingester.send("pause");
            long last = Long.parseLong(ingester.await("PAUSED", 30).substring("PAUSED ".length()));
            for (ChildProcess r : readers) {
                r.send("until " + last);
            }
            List<String> done = new ArrayList<>();
            for (ChildProcess r : readers) {
                done.add(r.await("DONE", 60));
            }
            ingester.send("stop");
            ingester.await("CLOSED", 30);
            assertEquals(0, ingester.process.waitFor());

            List<FeedFrame.Event> disk = ArchiveScan.events(data);
            List<String> expected = new ArrayList<>();
            for (FeedFrame.Event e : disk) {
                expected.add(e.seq() + " " + Arrays.hashCode(FeedCodec.encode(e)));
            }
            assertTrue(expected.size() > 1000, "only " + expected.size() + " events archived");
            assertEquals(last, disk.get(disk.size() - 1).seq());
            for (int i = 0; i < 4; i++) {
                List<String> got = Files.readAllLines(dir.resolve("reader" + i + ".txt"));
                assertEquals(expected, got, "reader " + i + " (" + done.get(i) + ")");
                long connections = Long.parseLong(done.get(i).split(" ")[2]);
                assertTrue(connections >= 2, "reader " + i + " did not reconnect across the restart");
            }
            ingester.close();
        } finally {
            for (ChildProcess r : readers) {
                r.close();
            }
        }
    }
}
