package jetstream.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import jetstream.atproto.json.JsonBuffer;
import jetstream.client.Batch;
import jetstream.client.Event;
import jetstream.client.Jetstream;
import jetstream.client.JetstreamClient;
import jetstream.client.JetstreamException;
import jetstream.client.Options;
import jetstream.client.PlanPage;
import jetstream.client.XrpcException;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The network commands of the CLI, on top of the client library: {@code subscribe} (live, or from a
 * cursor), {@code backfill} (archive then live, or the archive only) and {@code plan}. Events are
 * written as v2 payload JSON lines. Exit codes: 0 done, 1 server or network failure (the XRPC error
 * name and message are shown), 2 bad arguments, hosts or filters.
 */
final class ClientCommands {
    private final OutputStream stdout;
    private final PrintStream stderr;
    private final boolean tty;

    ClientCommands(OutputStream stdout, PrintStream stderr, boolean tty) {
        this.stdout = stdout;
        this.stderr = stderr;
        this.tty = tty;
    }

    static ClientCommands system() {
        return new ClientCommands(System.out, System.err, System.console() != null);
    }

    @Command(name = "subscribe", mixinStandardHelpOptions = true,
            description = "stream events as v2 JSON lines: live, from a cursor, or archive-then-live")
    static final class Subscribe implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Option(names = "--cursor", paramLabel = "N", converter = ClientOptions.NonNegative.class,
                description = "live from this cursor (a seq or a unix-microsecond time)")
        Long cursor;

        @Option(names = "--after-seq", paramLabel = "N", converter = ClientOptions.NonNegative.class,
                description = "the archive after seq N, then live")
        Long afterSeq;

        @Override
        public Integer call() throws Exception {
            if (cursor != null && afterSeq != null) {
                throw new Main.UsageException("--cursor (live) and --after-seq (backfill then live) exclude each other");
            }
            return system().stream("subscribe", o, o.options(afterSeq, null, false, cursor));
        }
    }

    @Command(name = "backfill", mixinStandardHelpOptions = true,
            description = "download the archive for a filter (then follow live unless --snapshot-only)")
    static final class Backfill implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Mixin
        SeqWindow window;

        @Option(names = "--snapshot-only", description = "the archive only, no live tail (needed with --before-seq)")
        boolean snapshotOnly;

        @Override
        public Integer call() throws Exception {
            return system().stream("backfill", o, o.options(window.sinceSeq, window.beforeSeq, snapshotOnly, null));
        }
    }

    @Command(name = "plan", mixinStandardHelpOptions = true,
            description = "print the planSnapshot work units (one JSON line per segment entry)")
    static final class Plan implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Mixin
        SeqWindow window;

        @Override
        public Integer call() throws Exception {
            return system().plan(o, o.options(window.sinceSeq, window.beforeSeq, window.beforeSeq != null, null));
        }
    }

    /** The archive window of {@code backfill} and {@code plan}. */
    static final class SeqWindow {
        @Option(names = "--since-seq", paramLabel = "N", converter = ClientOptions.NonNegative.class, defaultValue = "0",
                description = "after seq N (default ${DEFAULT-VALUE}: the whole archive)")
        long sinceSeq;

        @Option(names = "--before-seq", paramLabel = "N", converter = ClientOptions.NonNegative.class,
                description = "before seq N")
        Long beforeSeq;
    }

    private int stream(String name, ClientOptions a, Options o) throws Main.UsageException, IOException {
        JetstreamClient client = open(a.host, o);
        OutputStream sink = a.out.equals("-") ? stdout : Files.newOutputStream(Path.of(a.out));
        long written = 0;
        Progress progress = new Progress(stderr, tty, a.quiet, a.progressMillis(), name, client::stats);
        try (OutputStream w = new BufferedOutputStream(sink, 1 << 16)) {
            JsonBuffer line = new JsonBuffer(4096);
            WireEvent scratch = new WireEvent();
            V2Json v2 = new V2Json();
            Iterator<Batch> it = client.events();
            outer:
            while (it.hasNext()) {
                for (Event e : it.next().events()) {
                    line.reset();
                    e.writeJson(line, scratch, v2);
                    line.append((byte) '\n');
                    w.write(line.array(), 0, line.length());
                    if (++written >= a.limit) {
                        break outer;
                    }
                }
                w.flush();
            }
        } catch (XrpcException e) {
            progress.close();
            stderr.println("jetstream " + name + ": server error " + e.error() + ": " + e.xrpcMessage()
                    + " (HTTP " + e.status() + ")");
            return 1;
        } catch (JetstreamException e) {
            progress.close();
            stderr.println("jetstream " + name + ": " + e.getMessage());
            return 1;
        } finally {
            client.close();
            if (sink != stdout) {
                sink.close();
            }
        }
        progress.finish();
        return 0;
    }

    private static JetstreamClient open(String host, Options o) throws Main.UsageException {
        try {
            return Jetstream.subscribe(host, o);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        }
    }

    int plan(ClientOptions a, Options o) throws Main.UsageException, IOException {
        List<PlanPage> pages;
        try {
            pages = Jetstream.plan(a.host, o);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        } catch (XrpcException e) {
            stderr.println("jetstream plan: server error " + e.error() + ": " + e.xrpcMessage() + " (HTTP " + e.status() + ")");
            return 1;
        } catch (JetstreamException e) {
            stderr.println("jetstream plan: " + e.getMessage());
            return 1;
        }
        PrintStream out = new PrintStream(stdout, false, java.nio.charset.StandardCharsets.UTF_8);
        long segs = 0;
        long blocks = 0;
        for (PlanPage p : pages) {
            for (PlanPage.Entry e : p.segments()) {
                StringBuilder sb = new StringBuilder();
                sb.append("{\"name\":\"").append(e.name()).append("\",\"index\":").append(e.index())
                        .append(",\"checksum\":\"").append(e.checksum()).append("\",\"minSeq\":").append(e.minSeq())
                        .append(",\"maxSeq\":").append(e.maxSeq()).append(",\"mode\":\"")
                        .append(e.wholeSegment() ? "segment" : "blocks").append('"');
                if (!e.wholeSegment()) {
                    sb.append(",\"blocks\":[");
                    for (int i = 0; i < e.ranges().size(); i++) {
                        long[] r = e.ranges().get(i);
                        sb.append(i == 0 ? "" : ",").append('[').append(r[0]).append(',').append(r[1]).append(']');
                    }
                    sb.append(']');
                    blocks += e.blocks();
                } else {
                    segs++;
                }
                out.println(sb.append('}'));
            }
        }
        out.flush();
        if (!a.quiet) {
            PlanPage first = pages.get(0);
            PlanPage last = pages.get(pages.size() - 1);
            stderr.println("plan: " + pages.size() + " page(s), sealedTipSeq " + first.sealedTipSeq()
                    + ", plannedThroughSeq " + last.plannedThroughSeq() + ", " + segs + " whole segment(s), "
                    + blocks + " block(s)");
        }
        return 0;
    }
}
