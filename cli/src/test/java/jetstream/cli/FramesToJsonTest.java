package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class FramesToJsonTest {
    private static final Pattern V1_HEAD = Pattern.compile("^\\{\"did\":\"([^\"]*)\",\"time_us\":\\d+,\"cursor\":(\\d+),");
    private static final Pattern V2_SEQ = Pattern.compile("\"seq\":(\\d+),\"time\":\"[^\"]*\"}}$");

    private static Path corpus(String name) {
        String root = System.getProperty("jetstream.root");
        Path p = Path.of(root == null ? "." : root).toAbsolutePath().resolveSibling("shared")
                .resolve("vectors/jetstream-corpus").resolve(name);
        assertTrue(Files.isRegularFile(p), "test vector missing: " + p);
        return p;
    }

    private record Run(int exit, List<String> stdout, String stderr) {}

    private static Run run(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "frames-to-json";
        System.arraycopy(args, 0, all, 1, args.length);
        CliRun r = CliRun.of(all);
        return new Run(r.exit(), r.lines(), r.err());
    }

    @Test
    void v1OutputIsWhatProductionServedPlusOurCursor() throws Exception {
        Run r = run("--wire", "v1", corpus("relay_frames.bin").toString());
        assertEquals(0, r.exit, r.stderr);
        List<String> expected = Files.readAllLines(corpus("relay_frames_expected_v1.jsonl"));
        assertEquals(91, r.stdout.size());
        assertEquals(expected.size(), r.stdout.size());
        for (int i = 0; i < expected.size(); i++) {
            Matcher m = V1_HEAD.matcher(r.stdout.get(i));
            assertTrue(m.find(), r.stdout.get(i));
            assertEquals(i + 1, Long.parseLong(m.group(2)), "seqs are assigned from 1 in file order");
            String ours = m.replaceFirst("{\"did\":\"$1\",\"time_us\":0,");
            String served = expected.get(i).replaceFirst("\"time_us\":\\d+,", "\"time_us\":0,");
            assertEquals(served, ours, "line " + (i + 1));
        }
        assertTrue(r.stderr.contains("91 frames, 91 events written, 0 malformed"), r.stderr);
    }

    @Test
    void v2OutputIsOneMessageFramePerEvent() throws Exception {
        Run r = run(corpus("relay_frames.bin").toString(), "--wire", "v2");
        assertEquals(0, r.exit, r.stderr);
        assertEquals(91, r.stdout.size());
        for (int i = 0; i < r.stdout.size(); i++) {
            String line = r.stdout.get(i);
            assertTrue(line.startsWith("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#"), line);
            Matcher m = V2_SEQ.matcher(line);
            assertTrue(m.find(), line);
            assertEquals(i + 1, Long.parseLong(m.group(1)));
        }
    }

    @Test
    void malformedFramesAreReportedAndSkipped(@TempDir Path dir) throws Exception {
        byte[] all = Files.readAllBytes(corpus("relay_frames.bin"));
        int firstLen = (all[0] & 0xff) | (all[1] & 0xff) << 8 | (all[2] & 0xff) << 16 | (all[3] & 0xff) << 24;
        byte[] first = Arrays.copyOfRange(all, 0, 4 + firstLen);
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        file.write(first);
        file.write(new byte[] {3, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        file.write(first);
        file.write(new byte[] {100, 0, 0, 0, 1, 2});
        Path capture = dir.resolve("capture.bin");
        Files.write(capture, file.toByteArray());

        Run r = run("--wire", "v1", capture.toString());
        assertEquals(0, r.exit, r.stderr);
        assertEquals(2, r.stdout.size());
        assertTrue(r.stderr.contains("frame 2 at offset " + first.length + ": malformed"), r.stderr);
        assertTrue(r.stderr.contains("cannot frame the rest of the file"), r.stderr);
        assertTrue(r.stderr.contains("3 frames, 2 events written, 1 malformed"), r.stderr);
    }

    @Test
    void missingFileExitsOneAndBadArgumentsAreUsageErrors() throws Exception {
        Run r = run("--wire", "v1", "/nonexistent/capture.bin");
        assertEquals(1, r.exit);
        assertTrue(r.stderr.contains("no such file"), r.stderr);
        PrintStream saved = System.err;
        try {
            System.setErr(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            assertEquals(2, Main.run(new String[] {"frames-to-json", "--wire", "v3", "x"}));
            assertEquals(2, Main.run(new String[] {"frames-to-json", "x"}));
            assertEquals(2, Main.run(new String[] {"frames-to-json", "--wire"}));
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void unreadableFileIsAnError(@TempDir Path dir) throws IOException {
        Path directory = dir.resolve("not-a-file");
        Files.createDirectory(directory);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(1, Main.run(new String[] {"frames-to-json", "--wire", "v2", directory.toString()}));
        } finally {
            System.setErr(saved);
        }
    }
}
