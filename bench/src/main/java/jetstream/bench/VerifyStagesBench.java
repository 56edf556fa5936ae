package jetstream.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.sync.Commit;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.Simulator;
import jetstream.testing.ResultLine;

/**
 * Where a verified {@code #commit} spends its CPU outside the signature: each stage of the live
 * verify-and-convert path run alone over the same simulator commits (the frames {@link LiveIngestBench}
 * uses), one thread, thread CPU time per commit. Stages: frame decode, CAR parse with every block
 * hashed, commit block decode, signature, MST inversion, row conversion, and the whole path
 * ({@link CommitVerifier#verify} then {@link RowConverter#convert} with the verified blocks, as the
 * live applier runs them). "outside the signature" = whole path minus signature. {@code RESULT
 * verify_stages_whole_cpu_us_per_commit} and {@code verify_stages_outside_signature_cpu_us_per_commit} take the
 * signature stage as their floor: the one cost no verifying path avoids.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.VerifyStagesBench [events] [passes]} (defaults 20000, 5;
 * two warm-up passes precede them; medians reported).
 */
public final class VerifyStagesBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** One commit with everything a stage needs prepared outside the timing. */
    record Prepared(byte[] frame, FirehoseMessage.Commit msg, PublicKey key, Map<Cid, CarBlock> blocks, CarBlock commitBlock,
                    Commit commit, List<RepoOp> ops) {}

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path root = Files.createTempDirectory("verify-stages-bench");
        List<Prepared> commits = new ArrayList<>();
        try (Simulator sim = Simulator.start(LiveIngestBench.network(events));
                MetaStore store = MetaStore.open(root)) {
            sim.advance(events);
            List<byte[]> frames = LiveIngestBench.capture(sim, events);
            IdentityResolver ids = new IdentityResolver(HttpClient.newHttpClient(), sim.url(), store, Duration.ofHours(24));
            Map<String, PublicKey> keys = new HashMap<>();
            FrameDecoder decoder = new FrameDecoder();
            for (byte[] f : frames) {
                if (decoder.decode(f) instanceof FirehoseMessage.Commit c && c.prevData() != null) {
                    PublicKey k = keys.computeIfAbsent(c.repo(), d -> {
                        try {
                            return ids.fetch(d).doc().signingKey();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    ByteSlice car = c.blocks();
                    Map<Cid, CarBlock> blocks = CarReader.readAll(car.buffer(), car.offset(), car.length());
                    CarBlock cb = blocks.get(c.commit());
                    List<RepoOp> ops = new ArrayList<>();
                    for (FirehoseMessage.RepoOp op : c.ops()) {
                        ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
                    }
                    commits.add(new Prepared(f, c, k, blocks, cb, Commit.decode(cb.buffer(), cb.offset(), cb.length()), ops));
                }
            }
        }
        System.out.printf("%d verifiable commits of %d frames; load average %.2f%n", commits.size(), events,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        Map<String, ToLongFunction<Prepared>> stages = new LinkedHashMap<>();
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        stages.put("frame decode", p -> decoder.decode(p.frame()).seq());
        stages.put("CAR parse + block hashes", p -> CarReader.readAll(p.msg().blocks().buffer(), p.msg().blocks().offset(),
                p.msg().blocks().length()).size());
        stages.put("commit block decode", p -> Commit.decode(p.commitBlock().buffer(), p.commitBlock().offset(),
                p.commitBlock().length()).version());
        stages.put("signature", p -> p.commit().verifySignature(p.key()) ? 1 : 0);
        stages.put("MST inversion", p -> CommitVerifier.invert(p.commit().data(), BlockStore.ofCar(p.blocks()), p.ops(),
                p.msg().prevData()).ok() ? 1 : 0);
        stages.put("row conversion", p -> converter.convert(p.msg()).rows().size());
        stages.put("whole: verify + convert", p -> {
            FirehoseMessage.Commit c = p.msg();
            ByteSlice car = c.blocks();
            VerifyResult v = CommitVerifier.verify(c.repo(), c.rev(), c.commit(), car.buffer(), car.offset(), car.length(),
                    p.ops(), c.prevData(), p.key());
            if (!v.ok()) {
                throw new IllegalStateException("commit does not verify");
            }
            return converter.convert(c, v.blocks()).rows().size();
        });
        Map<String, List<Double>> results = new LinkedHashMap<>();
        for (int pass = 0; pass < passes + 2; pass++) {
            StringBuilder line = new StringBuilder(pass < 2 ? "warm-up" : "measured").append(" pass ").append(pass).append(':');
            for (Map.Entry<String, ToLongFunction<Prepared>> s : stages.entrySet()) {
                double us = cpuMicrosPerCommit(commits, s.getValue());
                line.append(String.format(" %s %.2f |", s.getKey(), us));
                if (pass >= 2) {
                    results.computeIfAbsent(s.getKey(), k -> new ArrayList<>()).add(us);
                }
            }
            System.out.println(line);
        }
        double whole = median(results.get("whole: verify + convert"));
        double sig = median(results.get("signature"));
        for (Map.Entry<String, List<Double>> r : results.entrySet()) {
            System.out.printf("%-28s median %8.2f µs CPU per commit%n", r.getKey(), median(r.getValue()));
        }
        System.out.printf("%-28s median %8.2f µs CPU per commit (whole path minus signature)%n", "outside the signature",
                whole - sig);
        ResultLine.print("verify_stages_whole_cpu_us_per_commit", whole, sig);
        ResultLine.print("verify_stages_outside_signature_cpu_us_per_commit", whole - sig, sig);
        try (var s = Files.walk(root)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static double cpuMicrosPerCommit(List<Prepared> commits, ToLongFunction<Prepared> stage) {
        long sink = 0;
        long t0 = THREADS.getCurrentThreadCpuTime();
        for (Prepared p : commits) {
            sink += stage.applyAsLong(p);
        }
        long cpu = THREADS.getCurrentThreadCpuTime() - t0;
        if (sink == Long.MIN_VALUE) {
            System.out.print("");
        }
        return cpu / 1e3 / commits.size();
    }

    private static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a[a.length / 2];
    }
}
