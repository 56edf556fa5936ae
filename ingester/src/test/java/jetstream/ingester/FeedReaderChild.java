package jetstream.ingester;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;

/**
 * A reader process for the feed test: follows the feed from seq 1; on {@code until N} waits until it
 * has seen seq N, then writes {@code seq hash} lines (hash of the encoded event) to its output file
 * and prints {@code DONE <events> <connections>}. Args: socket, output file.
 */
public final class FeedReaderChild {
    public static void main(String[] args) throws Exception {
        List<long[]> seen = new ArrayList<>();
        FeedClient c = FeedClient.start(new FeedClient.Options(Path.of(args[0]), Duration.ofMillis(20),
                Duration.ofMillis(200), Duration.ofSeconds(5)), 1, f -> {
                    if (f instanceof FeedFrame.Event e) {
                        synchronized (seen) {
                            seen.add(new long[] {e.seq(), Arrays.hashCode(FeedCodec.encode(e))});
                        }
                    }
                });
        System.out.println("STARTED");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = in.readLine();
        long until = Long.parseLong(line.substring("until ".length()));
        while (c.lastEventSeq() < until && c.isRunning()) {
            Thread.sleep(10);
        }
        long connections = c.connections();
        c.close();
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(args[1])))) {
            synchronized (seen) {
                for (long[] s : seen) {
                    w.println(s[0] + " " + s[1]);
                }
            }
        }
        System.out.println("DONE " + seen.size() + " " + connections);
        System.out.flush();
    }
}
