package jetstream.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jetstream.planner.DidFilterSpace;
import jetstream.planner.Manifest;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.Footer;
import jetstream.segment.FooterBuilder;
import jetstream.segment.FooterTail;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.testing.ResultLine;

/**
 * Archive-server at full-network manifest size (issue 21): heap, time to ready and planSnapshot p50
 * for a 3-DID filter over a generated archive of N segments × B blocks whose footers are built by
 * our {@link FooterBuilder} from blocks of D rows with D distinct DIDs each (so every block index
 * entry, per-block bloom, segment bloom and collection index has its full-size shape). Block frames
 * are 25-byte placeholders (the planner never reads them), so the disk holds mostly footers. Four
 * footer templates (different DID pools) are built once; each segment is a template with its seqs
 * shifted, re-footered by {@link FooterBuilder#patchBlockIndex} (real checksums).
 *
 * <p>Measures (1) in-process: load every file mapped with {@link SegmentSummary#open}, heap retained
 * after a full GC, planner p50; (2) the packaged archive-server ({@code archive-server/target/quarkus-app},
 * skipped when absent) with {@code -Xmx512m}: start to {@code /q/health/ready}, heap used after
 * {@code jcmd GC.run}, planSnapshot p50 over HTTP on 127.0.0.1. Floors: the in-process plans' is the segment-bloom
 * level alone (every segment bloom probed, {@code segment_bloom_level_absent_cpu_p50_us}); the server's figures take
 * the in-process ones (ready and first plan: the manifest load; group filters: load + filter build; heap; plan p50:
 * the in-process wall p50). The in-process load, filter build and heap print {@code floor=none}: they are those
 * floors, and nothing cheaper does the same work.
 *
 * <p>{@code bench/run --main jetstream.bench.ManifestScaleBench <dir> [segments=6400] [blocks=860] [didsPerBlock=256]
 * [templates=4] [filterCache]} (an existing archive of the same segment count in {@code <dir>/segments} is reused;
 * with {@code filterCache} the group DID filters are mapped from files there, as the archive-server does, else
 * they are heap arrays within the 128 MiB heap budget). Each
 * template is a DID pool, so a group of 64 consecutive segments holds min(64, templates) pools: with 4 the
 * group DID filters are small (pools repeat), with 64 every segment of a group has its own DIDs.
 */
public final class ManifestScaleBench {
    /** Footer templates (DID pools); segments cycle through them. More templates, more distinct DIDs per group. */
    private static int templates = 4;
    /** Where the group DID filters live in the in-process run. */
    private static DidFilterSpace filterSpace = DidFilterSpace.heap(DidFilterSpace.DEFAULT_HEAP_BYTES);
    private static final int COLLECTIONS = 48;
    private static final int ROUNDS = 300;
    /** A round stops after this long (the present-DID plans over 6,400 segments take ~1 s each). */
    private static final long BUDGET_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** In-process figures, the floors of the server's (build and heap: the configured filter space, measured first). */
    private static final Map<String, Double> FLOORS = new HashMap<>();
    /** In-process plan CPU p50 by metric, printed against the segment-bloom level once that is measured. */
    private static final Map<String, Double> PLANS_CPU_P50 = new LinkedHashMap<>();

    private ManifestScaleBench() {}

    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        int segments = args.length > 1 ? Integer.parseInt(args[1]) : 6400;
        int blocks = args.length > 2 ? Integer.parseInt(args[2]) : 860;
        int dids = args.length > 3 ? Integer.parseInt(args[3]) : 256;
        templates = args.length > 4 ? Integer.parseInt(args[4]) : 4;
        if (args.length > 5) {
            filterSpace = DidFilterSpace.mapped(Path.of(args[5]), DidFilterSpace.DEFAULT_MAPPED_BYTES);
        }
        Path dir = Files.createDirectories(data.resolve("segments"));
        long t0 = System.nanoTime();
        long bytes = generate(dir, segments, blocks, dids);
        System.out.printf("archive: %d segments × %d blocks × %d DIDs/block, %.2f GiB on disk (%s, %.1f s)%n",
                segments, blocks, dids, bytes / (double) (1L << 30), data, (System.nanoTime() - t0) / 1e9);
        inProcess(dir, blocks, dids);
        Path jar = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize().resolve("archive-server/target/quarkus-app/quarkus-run.jar");
        if (Files.exists(jar)) {
            server(jar, data, blocks, dids);
        } else {
            System.out.println("archive-server not packaged (" + jar + "): server figures skipped");
        }
    }

    static String did(int template, int n) {
        return "did:plc:" + String.format("%02d%022d", template, n);
    }

    /** Writes the archive unless one of this shape is there; returns its bytes. */
    static long generate(Path dir, int segments, int blocks, int dids) throws IOException {
        List<SegmentName.Entry> have = SegmentName.scan(dir);
        if (have.size() == segments) {
            long total = 0;
            for (SegmentName.Entry e : have) {
                total += Files.size(e.path());
            }
            return total;
        }
        for (SegmentName.Entry e : have) {
            Files.delete(e.path());
        }
        byte[] placeholder;
        try (ZstdFrames z = new ZstdFrames()) {
            placeholder = z.compress(new byte[16], 0, 16);
        }
        byte[] frame = new byte[8 + placeholder.length];
        ByteBuffer.wrap(frame).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(placeholder.length);
        System.arraycopy(placeholder, 0, frame, 8, placeholder.length);
        Footer[] footers = new Footer[templates];
        for (int t = 0; t < templates; t++) {
            footers[t] = template(t, blocks, dids, frame.length, placeholder.length);
        }
        byte[] region = new byte[blocks * frame.length];
        for (int b = 0; b < blocks; b++) {
            System.arraycopy(frame, 0, region, b * frame.length, frame.length);
        }
        long total = 0;
        long perSegment = (long) blocks * dids;
        for (int s = 0; s < segments; s++) {
            Footer t = footers[s % templates];
            SegmentHeader h = t.header();
            long shift = s * perSegment;
            List<BlockIndexEntry> entries = new ArrayList<>(blocks);
            ByteBuffer fb = ByteBuffer.wrap(t.footerBytes()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int b = 0; b < blocks; b++) {
                BlockIndexEntry e = BlockIndexEntry.read(t.footerBytes(), b * BlockIndexEntry.SIZE);
                entries.add(new BlockIndexEntry(e.offset(), e.compressedSize(), e.uncompressedSize(), e.eventCount(),
                        e.minSeq() + shift, e.maxSeq() + shift, e.minWitnessedAt(), e.maxWitnessedAt()));
            }
            SegmentHeader shifted = new SegmentHeader(h.checksum(), h.version(), h.blockCount(), h.eventCount(),
                    h.uniqueDidCount(), h.minSeq() + shift, h.maxSeq() + shift, h.minWitnessedAt(), h.maxWitnessedAt(),
                    h.footerOffset(), h.didBloomOffset(), h.blockDidBloomOffset(), h.collectionIndexOffset(),
                    h.blockIndexOffset());
            int tailAt = (int) (h.didBloomOffset() - h.footerOffset());
            // without the DID census: no manifest load reads it, and at 13 bytes per distinct DID it would
            // be most of this archive's bytes (its blocks are placeholders)
            int collAt = (int) (h.collectionIndexOffset() - h.footerOffset());
            FooterTail sections = FooterTail.locate(t.footerBytes(), collAt, fb.limit() - collAt);
            int end = sections == null || sections.censusAt() < 0 ? fb.limit() : collAt + sections.censusAt();
            byte[] tail = Arrays.copyOfRange(t.footerBytes(), tailAt, end);
            Footer f = FooterBuilder.patchBlockIndex(shifted, entries, tail, h.footerOffset());
            Path p = dir.resolve(SegmentName.format(s));
            try (OutputStream o = Files.newOutputStream(p)) {
                o.write(f.headerBytes());
                o.write(region);
                o.write(f.footerBytes());
            }
            total += f.fileSize();
        }
        return total;
    }

    /** One full-shape footer: blocks of {@code dids} rows, each row a distinct DID from this template's pool. */
    private static Footer template(int t, int blocks, int dids, int frameBytes, int frameLen) {
        SplittableRandom rnd = new SplittableRandom(21 + t);
        int pool = blocks * dids;
        byte[][] colls = new byte[COLLECTIONS][];
        for (int c = 0; c < COLLECTIONS; c++) {
            colls[c] = (c < 6 ? "app.bsky.feed.c" + c : "com.example" + c + ".record").getBytes(StandardCharsets.US_ASCII);
        }
        byte[] rkey = "3kaaaaaaaaaa2".getBytes(StandardCharsets.US_ASCII);
        byte[] payload = {(byte) 0xa0};
        try (ZstdFrames zstd = new ZstdFrames()) {
            FooterBuilder fb = new FooterBuilder(zstd);
            long seq = 0;
            long off = SegmentHeader.SIZE;
            BlockView view = new BlockView();
            for (int b = 0; b < blocks; b++) {
                BlockBuilder bb = new BlockBuilder(dids);
                java.util.Set<Integer> used = new java.util.HashSet<>();
                for (int r = 0; r < dids; r++) {
                    int n;
                    do {
                        n = rnd.nextInt(pool);
                    } while (!used.add(n));
                    // Six common collections in every block, the rest rare (a few blocks each).
                    byte[] coll = colls[rnd.nextInt(8) < 7 ? rnd.nextInt(6) : 6 + rnd.nextInt(COLLECTIONS - 6)];
                    bb.add(++seq, 1_750_000_000_000_000L + seq, 0, 1, did(t, n).getBytes(StandardCharsets.US_ASCII), coll,
                            rkey, rkey, payload);
                }
                byte[] body = bb.toBody();
                view.decode(body, 0, body.length);
                fb.addBlock(off, frameLen, view);
                off += frameBytes;
            }
            return fb.build(off);
        }
    }

    private static List<List<String>> filters(int blocks, int dids) {
        SplittableRandom rnd = new SplittableRandom(5);
        int pool = blocks * dids;
        List<String> present = List.of(did(0, rnd.nextInt(pool)), did(1, rnd.nextInt(pool)), did(2, rnd.nextInt(pool)));
        List<String> absent = List.of(did(90, 1), did(91, 2), did(92, 3));
        return List.of(absent, present);
    }

    private static void inProcess(Path dir, int blocks, int dids) throws IOException {
        System.gc();
        long heap0 = usedHeap();
        long t0 = System.nanoTime();
        List<SegmentSummary> sums = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(dir)) {
                ByteBuffer map;
                try (FileChannel ch = FileChannel.open(e.path(), StandardOpenOption.READ)) {
                    map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
                }
                sums.add(SegmentSummary.open(map, e.path().getFileName().toString(), e.index(), 0, zstd));
            }
        }
        double loadS = (System.nanoTime() - t0) / 1e9;
        long blocksTotal = 0;
        for (SegmentSummary s : sums) {
            blocksTotal += s.blockCount();
        }
        System.out.printf("manifest load in process: %d segments, %d blocks%n", sums.size(), blocksTotal);
        ResultLine.printNoFloor("manifest_load_in_process_s", loadS);
        FLOORS.put("load_s", loadS);
        List<List<String>> fs = filters(blocks, dids);
        // with a filter cache, the heap space (the 128 MiB budget before the cache) is measured too, in the same run
        // and after it (the heap figure of each build then counts only its own filters)
        List<DidFilterSpace> spaces = filterSpace.isMapped()
                ? List.of(filterSpace, DidFilterSpace.heap(DidFilterSpace.DEFAULT_HEAP_BYTES)) : List.of(filterSpace);
        List<Manifest> built = new ArrayList<>();
        Manifest m = null;
        for (DidFilterSpace space : spaces) {
            System.gc();
            long tb = System.nanoTime();
            m = Manifest.of(sums, Manifest.empty(space));
            String label = m.didGroupFiltersMapped() ? "mapped" : "heap";
            // the archive-server does this in the background
            double buildS = (System.nanoTime() - tb) / 1e9;
            ResultLine.printNoFloor("did_group_filter_build_" + label + "_s", buildS);
            FLOORS.putIfAbsent("build_s", buildS);
            System.gc();
            long heap = usedHeap() - heap0;
            System.out.printf("manifest heap in process, %s filters: %.1f B per block; blooms probed off-heap: %.2f GiB;"
                    + " %d group DID filters (64 segments each), %d bytes%n", label, (double) heap / blocksTotal,
                    m.residentBloomBytes() / (double) (1L << 30), m.didGroupFilters(), m.didGroupFilterBytes());
            ResultLine.printNoFloor("manifest_heap_in_process_" + label + "_mib", heap / 1048576.0);
            FLOORS.putIfAbsent("heap_mib", heap / 1048576.0);
            built.add(m);
        }
        // twice, alternating the spaces, so a change of load on a shared box does not pass for a difference
        for (int rep = 0; rep < 2; rep++) {
            for (Manifest b : built) {
                planRounds(b, b.didGroupFiltersMapped() ? "mapped" : "heap", fs);
            }
        }
        serialSegmentProbes(m, fs.get(0));
    }

    private static void planRounds(Manifest m, String label, List<List<String>> fs) {
        String[] names = {"absent", "present"};
        for (int i = 0; i < fs.size(); i++) {
            PlanFilter f = PlanFilter.parse(null, fs.get(i), null, 0L, null, PlanLimits.DEFAULTS);
            long first = System.nanoTime();
            int entries = SnapshotPlanner.plan(m, f, PlanLimits.DEFAULTS).segments().size();
            first = System.nanoTime() - first;
            long[] t = new long[ROUNDS];
            long[] cpu = new long[ROUNDS];
            var threads = java.lang.management.ManagementFactory.getThreadMXBean();
            int n = 0;
            for (long end = System.nanoTime() + BUDGET_NANOS; n < ROUNDS && (n < 5 || System.nanoTime() < end); n++) {
                long c = threads.getCurrentThreadCpuTime();
                long s = System.nanoTime();
                SnapshotPlanner.plan(m, f, PlanLimits.DEFAULTS);
                t[n] = System.nanoTime() - s;
                cpu[n] = threads.getCurrentThreadCpuTime() - c;
            }
            Arrays.sort(t, 0, n);
            Arrays.sort(cpu, 0, n);
            // On a shared box wall time includes waiting for a core; the thread's CPU time does not.
            System.out.printf("plan, 3 %s DIDs, in process, %s filters: CPU p50 %.0f us (target 1000), wall p50 %.0f us p99 %.0f,"
                    + " first %.0f us, %d entries, %d rounds%n", names[i], label, cpu[n / 2] / 1e3, t[n / 2] / 1e3,
                    t[n * 99 / 100] / 1e3, first / 1e3, entries, n);
            PLANS_CPU_P50.put("plan_3dids_" + names[i] + "_" + label + "_in_process_cpu_p50_us", cpu[n / 2] / 1e3);
            FLOORS.put("plan_" + names[i] + "_wall_p50_us", t[n / 2] / 1e3);
        }
    }

    /**
     * The segment-bloom level alone (every segment bloom probed for each DID, early exit): what an
     * absent-DID plan costs beyond walking the manifest, i.e. the part a first-level structure must cut.
     */
    private static void serialSegmentProbes(Manifest m, List<String> dids) {
        GloomFilter.Probe[] probes = new GloomFilter.Probe[dids.size()];
        for (int d = 0; d < probes.length; d++) {
            probes[d] = GloomFilter.Probe.of(dids.get(d).getBytes(StandardCharsets.US_ASCII));
        }
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long[] cpu = new long[ROUNDS];
        int n = 0;
        int maybe = 0;
        for (long end = System.nanoTime() + BUDGET_NANOS; n < ROUNDS && (n < 5 || System.nanoTime() < end); n++) {
            long c = threads.getCurrentThreadCpuTime();
            for (SegmentSummary s : m.segments()) {
                for (GloomFilter.Probe p : probes) {
                    if (s.segmentMightContain(p)) {
                        maybe++;
                        break;
                    }
                }
            }
            cpu[n] = threads.getCurrentThreadCpuTime() - c;
        }
        Arrays.sort(cpu, 0, n);
        double floorUs = cpu[n / 2] / 1e3;
        System.out.printf("segment_bloom_level_absent_cpu_p50_us %.0f (segment blooms only, the plans' floor;"
                + " %d maybe answers over %d rounds)%n", floorUs, maybe, n);
        PLANS_CPU_P50.forEach((metric, v) -> ResultLine.print(metric, v, floorUs));
    }

    private static long usedHeap() {
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void server(Path jar, Path data, int blocks, int dids) throws Exception {
        int port = freePort();
        int mgmt = freePort();
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder("java", "-Xmx512m", "-Djetstream.data-dir=" + data,
                "-Djetstream.archive.standalone=true", "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.port=" + mgmt, "-Dquarkus.management.host=127.0.0.1", "-jar", jar.toString())
                .redirectErrorStream(true).redirectOutput(data.resolve("archive.log").toFile()).start();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try {
            HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmt + "/q/health/ready")).build();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(600);
            while (true) {
                try {
                    if (http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        break;
                    }
                } catch (IOException notYet) {
                    // Not listening yet.
                }
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("archive-server not ready; see " + data.resolve("archive.log"));
                }
                Thread.sleep(100);
            }
            double readyS = (System.nanoTime() - t0) / 1e9;
            // process start to /q/health/ready 200 (-Xmx512m, target 60 s), against loading the same manifest in process
            ResultLine.print("server_ready_s", readyS, FLOORS.get("load_s"));
            awaitGroupFilters(http, mgmt, t0);
            String[] names = {"absent", "present"};
            List<List<String>> fs = filters(blocks, dids);
            for (int i = 0; i < fs.size(); i++) {
                StringBuilder body = new StringBuilder("{\"afterSeq\":0,\"dids\":[");
                for (int d = 0; d < fs.get(i).size(); d++) {
                    body.append(d == 0 ? "\"" : ",\"").append(fs.get(i).get(d)).append('"');
                }
                HttpRequest plan = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/xrpc/network.bsky.jetstream.planSnapshot")).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body.append("]}").toString())).build();
                long first = System.nanoTime();
                HttpResponse<String> r = http.send(plan, HttpResponse.BodyHandlers.ofString());
                first = System.nanoTime() - first;
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("planSnapshot " + r.statusCode() + ": " + r.body());
                }
                if (i == 0) {
                    // /q/health/ready waits for the first manifest load; the first plan then reads and CRC-checks blooms.
                    ResultLine.print("server_first_plan_s", (System.nanoTime() - t0) / 1e9, FLOORS.get("load_s"));
                }
                long[] t = new long[ROUNDS];
                int n = 0;
                for (long end = System.nanoTime() + BUDGET_NANOS; n < ROUNDS && (n < 5 || System.nanoTime() < end); n++) {
                    long s = System.nanoTime();
                    http.send(plan, HttpResponse.BodyHandlers.discarding());
                    t[n] = System.nanoTime() - s;
                }
                Arrays.sort(t, 0, n);
                System.out.printf("server plan, 3 %s DIDs, over HTTP: p99 %.0f us, first %.0f us, %d rounds (target p50 1000)%n",
                        names[i], t[n * 99 / 100] / 1e3, first / 1e3, n);
                ResultLine.print("server_plan_3dids_" + names[i] + "_http_p50_us", t[n / 2] / 1e3,
                        FLOORS.get("plan_" + names[i] + "_wall_p50_us"));
            }
            // target 512; the floor is the same manifest's heap in process
            ResultLine.print("server_heap_used_after_gc_mib", heapAfterGc(p.pid()) / 1048576.0, FLOORS.get("heap_mib"));
        } finally {
            p.destroy();
            p.waitFor(20, TimeUnit.SECONDS);
        }
    }

    /**
     * Waits until the server's background build swapped in its group DID filters (the gauge leaves 0; the build swaps
     * all groups in at once): plans answered before that probe every segment bloom, which is the start-up state, not
     * the steady one the HTTP rounds measure.
     */
    private static void awaitGroupFilters(HttpClient http, int mgmt, long t0) throws Exception {
        HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmt + "/q/metrics")).build();
        Pattern gauge = Pattern.compile("(?m)^jetstream_manifest_did_group_filters(?:\\{[^}]*})? ([0-9.eE+]+)$");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (true) {
            Matcher m = gauge.matcher(http.send(metrics, HttpResponse.BodyHandlers.ofString()).body());
            if (m.find() && Double.parseDouble(m.group(1)) > 0) {
                // process start to the group DID filters in place (plans before that probe every segment bloom)
                System.out.printf("server group DID filters: %.0f groups%n", Double.parseDouble(m.group(1)));
                ResultLine.print("server_group_filters_s", (System.nanoTime() - t0) / 1e9, FLOORS.get("load_s") + FLOORS.get("build_s"));
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no group DID filters after 5 minutes (jetstream_manifest_did_group_filters)");
            }
            Thread.sleep(250);
        }
    }

    /** {@code jcmd <pid> GC.run}, then the "used" figure of {@code GC.heap_info}, in bytes. */
    private static long heapAfterGc(long pid) throws Exception {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run").redirectErrorStream(true).start().waitFor();
        Process info = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.heap_info").redirectErrorStream(true)
                .start();
        String text = new String(info.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        info.waitFor();
        Matcher m = Pattern.compile("used (\\d+)K").matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no heap figure in: " + text);
        }
        return Long.parseLong(m.group(1)) * 1024;
    }
}
