package jetstream.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
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

/**
 * The network commands of the CLI, on top of the client library: {@code subscribe} (live, or from a
 * cursor), {@code backfill} (archive then live, or the archive only) and {@code plan}. Events are
 * written as v2 payload JSON lines. Exit codes: 0 done, 1 server or network failure (the XRPC error
 * name and message are shown), 2 bad arguments, hosts or filters.
 */
final class ClientCommands {
    static final String SUBSCRIBE_USAGE = "subscribe --host H [--cursor N | --after-seq N] [filters] [--out FILE|-]";
    static final String BACKFILL_USAGE = "backfill --host H [--since-seq N] [--before-seq N --snapshot-only] [filters]";
    static final String PLAN_USAGE = "plan --host H [--since-seq N] [--before-seq N] [filters]";
    static final String FILTERS = "filters: --kinds a,b --collections a,b (ns.* allowed) --dids a,b; also --api-key K,"
            + " --limit N, --quiet, --no-zstd, --concurrency N, --stripes N, --max-attempts N, --progress-every SECONDS";

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

    /** Parsed flags shared by the three commands. */
    private static final class Args {
        String host;
        final List<String> kinds = new ArrayList<>();
        final List<String> collections = new ArrayList<>();
        final List<String> dids = new ArrayList<>();
        Long cursor;
        Long afterSeq;
        Long beforeSeq;
        boolean snapshotOnly;
        String out = "-";
        String apiKey;
        long limit = Long.MAX_VALUE;
        boolean quiet;
        boolean zstd = true;
        Integer concurrency;
        Integer stripes;
        Integer attempts;
        long progressMillis = 5000;

        static Args parse(String[] argv, List<String> allowed) throws Main.UsageException {
            Args a = new Args();
            for (int i = 0; i < argv.length; i++) {
                String f = argv[i];
                if (!f.startsWith("--") || !allowed.contains(f)) {
                    throw new Main.UsageException("unknown option " + f);
                }
                switch (f) {
                    case "--quiet" -> a.quiet = true;
                    case "--no-zstd" -> a.zstd = false;
                    case "--snapshot-only" -> a.snapshotOnly = true;
                    default -> {
                        if (i + 1 == argv.length) {
                            throw new Main.UsageException(f + " needs a value");
                        }
                        String v = argv[++i];
                        switch (f) {
                            case "--host" -> a.host = v;
                            case "--kinds" -> a.kinds.addAll(list(v));
                            case "--collections" -> a.collections.addAll(list(v));
                            case "--dids" -> a.dids.addAll(list(v));
                            case "--cursor" -> a.cursor = number(f, v);
                            case "--after-seq", "--since-seq" -> a.afterSeq = number(f, v);
                            case "--before-seq" -> a.beforeSeq = number(f, v);
                            case "--out" -> a.out = v;
                            case "--api-key" -> a.apiKey = v;
                            case "--limit" -> a.limit = number(f, v);
                            case "--concurrency" -> a.concurrency = (int) number(f, v);
                            case "--stripes" -> a.stripes = (int) number(f, v);
                            case "--max-attempts" -> a.attempts = (int) number(f, v);
                            case "--progress-every" -> a.progressMillis = Math.max(1, (long) (decimal(f, v) * 1000));
                            default -> throw new Main.UsageException("unknown option " + f);
                        }
                    }
                }
            }
            if (a.host == null) {
                throw new Main.UsageException("--host is required");
            }
            return a;
        }

        private static List<String> list(String v) {
            List<String> out = new ArrayList<>();
            for (String s : v.split(",")) {
                if (!s.isBlank()) {
                    out.add(s.strip());
                }
            }
            return out;
        }

        private static long number(String flag, String v) throws Main.UsageException {
            try {
                long n = Long.parseLong(v);
                if (n < 0) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                throw new Main.UsageException(flag + " must be a non-negative integer, not '" + v + "'");
            }
        }

        private static double decimal(String flag, String v) throws Main.UsageException {
            try {
                return Double.parseDouble(v);
            } catch (NumberFormatException e) {
                throw new Main.UsageException(flag + " must be a number, not '" + v + "'");
            }
        }

        Options options() throws Main.UsageException {
            Options.Builder b = Options.builder().kinds(kinds).collections(collections).dids(dids).zstd(zstd);
            if (afterSeq != null) {
                b.afterSeq(afterSeq);
            }
            if (beforeSeq != null) {
                b.beforeSeq(beforeSeq);
            }
            if (snapshotOnly) {
                b.snapshotOnly();
            }
            if (cursor != null) {
                b.liveCursor(cursor);
            }
            if (apiKey != null) {
                b.apiKey(apiKey);
            }
            if (concurrency != null) {
                b.downloadConcurrency(concurrency);
            }
            if (stripes != null) {
                b.segmentStripes(stripes);
            }
            if (attempts != null) {
                b.maxDownloadAttempts(attempts);
            }
            try {
                return b.build();
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
        }
    }

    private static final List<String> COMMON = List.of("--host", "--kinds", "--collections", "--dids", "--out",
            "--api-key", "--limit", "--quiet", "--no-zstd", "--concurrency", "--stripes", "--max-attempts",
            "--progress-every");

    private static List<String> with(String... more) {
        List<String> l = new ArrayList<>(COMMON);
        l.addAll(Arrays.asList(more));
        return l;
    }

    int subscribe(String[] argv) throws Main.UsageException, IOException {
        Args a = Args.parse(argv, with("--cursor", "--after-seq"));
        if (a.cursor != null && a.afterSeq != null) {
            throw new Main.UsageException("--cursor (live) and --after-seq (backfill then live) exclude each other");
        }
        return stream("subscribe", a);
    }

    int backfill(String[] argv) throws Main.UsageException, IOException {
        Args a = Args.parse(argv, with("--since-seq", "--before-seq", "--snapshot-only"));
        if (a.afterSeq == null) {
            a.afterSeq = 0L;
        }
        return stream("backfill", a);
    }

    private int stream(String name, Args a) throws Main.UsageException, IOException {
        Options o = a.options();
        JetstreamClient client = open(a.host, o);
        OutputStream sink = a.out.equals("-") ? stdout : Files.newOutputStream(Path.of(a.out));
        long written = 0;
        Progress progress = new Progress(stderr, tty, a.quiet, a.progressMillis, name, client::stats);
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

    int plan(String[] argv) throws Main.UsageException, IOException {
        Args a = Args.parse(argv, with("--since-seq", "--before-seq"));
        if (a.afterSeq == null) {
            a.afterSeq = 0L;
        }
        if (a.beforeSeq != null) {
            a.snapshotOnly = true;
        }
        Options o = a.options();
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
