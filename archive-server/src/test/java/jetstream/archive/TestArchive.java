package jetstream.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;

/** Builds archive directories for the tests from [B]'s writer and the Go golden files. */
final class TestArchive {
    static final String[] COLLECTIONS = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow"};
    static final int[] KINDS = {1, 1, 1, 2, 3, 4, 5, 6, 7};

    private TestArchive() {}

    /** {@code ../shared/vectors/<rel>} beside the repository (as shared-format's Vectors resolves it). */
    /**
     * Config of an archive-server that follows the ingester's feed on {@code data}/run/feed.sock (a test
     * plays the ingester), on a cleared data dir, with no periodic rescan; {@code extra} key/value pairs added.
     */
    static Map<String, String> feedConfig(Path data, String... extra) {
        clear(data);
        Map<String, String> m = new HashMap<>(Map.of("jetstream.archive.standalone", "false", "jetstream.data-dir",
                data.toString(), "jetstream.archive.rescan-interval", "1h"));
        for (int i = 0; i + 1 < extra.length; i += 2) {
            m.put(extra[i], extra[i + 1]);
        }
        return m;
    }

    /** Writes one feed frame to the archive-server's connection, as the ingester does. */
    static void send(SocketChannel ch, FeedFrame f) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(FeedCodec.encode(f));
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    static Path vector(String rel) {
        Path root = Path.of(System.getProperty("jetstream.root", "..")).toAbsolutePath().normalize();
        Path p = root.resolveSibling("shared").resolve("vectors").resolve(rel);
        if (!Files.exists(p)) {
            throw new IllegalStateException("test vector missing: " + p);
        }
        return p;
    }

    static void clear(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String did(long seq) {
        return "did:plc:" + "abcdefghijklmnopqrstuvwx".substring(0, 20) + Long.toString(seq % 7, 36) + "xyz";
    }

    /**
     * Writes rows {@code firstSeq..lastSeq} with {@link SegmentWriter} (blocks of {@code perBlock}),
     * seals the result and moves it into {@code segments} as segment {@code index}. A payload of
     * {@code payloadBytes} random bytes makes large files when wanted.
     */
    static Path writeSegment(Path segments, long index, long firstSeq, long lastSeq, int perBlock, int payloadBytes) {
        try {
            Path tmp = Files.createTempDirectory(segments.getParent(), "writer");
            SplittableRandom r = new SplittableRandom(firstSeq);
            try (SegmentWriter w = SegmentWriter.open(tmp, new SegmentWriter.Config(perBlock, 1L << 40, Duration.ZERO))) {
                for (long s = firstSeq; s <= lastSeq; s++) {
                    int kind = KINDS[(int) (s % KINDS.length)];
                    boolean commit = kind <= 3 || kind == 7;
                    byte[] coll = commit ? COLLECTIONS[(int) (s % COLLECTIONS.length)].getBytes(StandardCharsets.US_ASCII) : null;
                    byte[] rkey = commit ? ("3k" + Long.toString(s, 32)).getBytes(StandardCharsets.US_ASCII) : null;
                    byte[] payload = null;
                    if (kind != 3) {
                        payload = new byte[Math.max(8, payloadBytes)];
                        for (int i = 0; i < payload.length; i++) {
                            payload[i] = (byte) r.nextInt(256);
                        }
                        payload[0] = (byte) 0xa1;
                    }
                    w.append(s, 1_750_000_000_000_000L + s, 0, kind, did(s).getBytes(StandardCharsets.US_ASCII),
                            coll, rkey, "3mrev".getBytes(StandardCharsets.US_ASCII), payload);
                }
                w.seal();
            }
            Path sealed;
            try (Stream<Path> files = Files.list(tmp)) {
                sealed = files.filter(p -> p.getFileName().toString().endsWith(".jss")).sorted().findFirst().orElseThrow();
            }
            Files.createDirectories(segments);
            Path dst = segments.resolve(SegmentName.format(index));
            Files.move(sealed, dst, StandardCopyOption.REPLACE_EXISTING);
            clear(tmp);
            return dst;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path copyVector(Path segments, long index, String rel) {
        try {
            Files.createDirectories(segments);
            Path dst = segments.resolve(SegmentName.format(index));
            Files.copy(vector(rel), dst, StandardCopyOption.REPLACE_EXISTING);
            return dst;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
