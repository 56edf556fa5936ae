package jetstream.cli;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.json.JsonBuffer;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code frames-to-json --wire v1|v2 FILE}: reads a relay frame capture ({@code [u32 LE length][frame]...})
 * and prints each archivable event as one line of the chosen wire's JSON, as a fresh Jetstream would
 * serve it: seqs from 1 in file order, the conversion time as witnessed time. Malformed frames and
 * validation drops are reported on stderr and skipped; a summary line ends stderr. Exit 0 unless the
 * file cannot be read.
 */
@Command(name = "frames-to-json", mixinStandardHelpOptions = true,
        description = "print a relay frame capture ([u32 LE length][frame]...) as v1 or v2 event JSON lines")
final class FramesToJson implements Callable<Integer> {
    /** The two wires: v1 (the Go reference's JSON) and v2. */
    enum Wire { v1, v2 }

    @Option(names = "--wire", required = true, paramLabel = "v1|v2", description = "the JSON to print: ${COMPLETION-CANDIDATES}")
    Wire wire;

    @Parameters(paramLabel = "FILE", description = "the frame capture")
    Path file;

    @Override
    public Integer call() throws IOException {
        return run(file, wire == Wire.v1, System.out, System.err);
    }

    static int run(Path file, boolean v1, OutputStream stdout, PrintStream stderr) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
            convert(in, v1, stdout, stderr);
        } catch (NoSuchFileException e) {
            stderr.println("jetstream frames-to-json: no such file: " + file);
            return 1;
        }
        return 0;
    }

    private static void convert(InputStream in, boolean v1, OutputStream stdout, PrintStream stderr) throws IOException {
        RelayFrameFile frames = new RelayFrameFile(in);
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        V1Json v1Json = new V1Json();
        V2Json v2Json = new V2Json();
        JsonBuffer json = new JsonBuffer();
        WireEvent event = new WireEvent();
        OutputStream out = new BufferedOutputStream(stdout, 1 << 16);
        Map<String, Integer> drops = new TreeMap<>();
        long frameCount = 0;
        long malformed = 0;
        long written = 0;
        long seq = 0;
        while (true) {
            long offset = frames.offset();
            byte[] frame;
            try {
                frame = frames.next();
            } catch (DecodeException e) {
                stderr.println("offset " + offset + ": cannot frame the rest of the file (" + e.reason() + "): " + e.getMessage());
                break;
            }
            if (frame == null) {
                break;
            }
            frameCount++;
            RowConverter.Result result;
            try {
                result = converter.convert(decoder.decode(frame));
            } catch (DecodeException e) {
                malformed++;
                stderr.println("frame " + frameCount + " at offset " + offset + ": malformed (" + e.reason() + "): " + e.getMessage());
                continue;
            }
            for (Drop d : result.drops()) {
                drops.merge(d.reason(), 1, Integer::sum);
                stderr.println("frame " + frameCount + ": dropped " + (d.wholeEvent() ? "event" : "op") + " (" + d.reason() + "): " + d.detail());
            }
            long now = System.currentTimeMillis() * 1000;
            for (ArchiveRow row : result.rows()) {
                event.set(++seq, now, row);
                json.reset();
                try {
                    if (v1) {
                        if (!v1Json.write(event, json)) {
                            continue;
                        }
                    } else {
                        v2Json.writeMessage(event, json);
                    }
                } catch (DecodeException e) {
                    stderr.println("frame " + frameCount + ": cannot render seq " + seq + " (" + e.reason() + "): " + e.getMessage());
                    continue;
                }
                json.append((byte) '\n');
                out.write(json.array(), 0, json.length());
                written++;
            }
        }
        out.flush();
        stderr.println(frameCount + " frames, " + written + " events written, " + malformed + " malformed, drops " + drops);
    }
}
