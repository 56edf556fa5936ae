package jetstream.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockFraming;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.CollectionIndex;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.SegmentVerifier;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code jetstream inspect} and {@code jetstream verify}: look inside and check segment files. */
final class SegmentCommands {
    private SegmentCommands() {}

    @Command(name = "inspect", mixinStandardHelpOptions = true,
            description = "show a segment's header, blocks, collections and DIDs (active or sealed)")
    static final class Inspect implements Callable<Integer> {
        @Parameters(paramLabel = "SEGMENT_FILE", description = "a sealed or active segment file")
        Path file;

        @Option(names = "--dids", description = "list the DIDs too")
        boolean dids;

        @Override
        public Integer call() throws IOException {
            return inspect(file, dids);
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "check segment files end to end; exit status 1 if any is bad")
    static final class Verify implements Callable<Integer> {
        @Parameters(arity = "1..*", paramLabel = "SEGMENT_FILE|DIR", description = "files, or directories of segments")
        List<Path> paths;

        @Override
        public Integer call() throws IOException {
            return verify(paths);
        }
    }

    /** Header, blocks, collections, DIDs and compression of one file. */
    static int inspect(Path file, boolean listDids) throws IOException {
        PrintStream out = System.out;
        byte[] head = new byte[12];
        try (FileChannel ch = FileChannel.open(file)) {
            ch.read(ByteBuffer.wrap(head), 0);
        }
        out.println("file: " + file);
        out.println("size: " + Files.size(file) + " bytes");
        if (SegmentHeader.hasMagic(head, 0) && SegmentHeader.storedChecksum(head, 0) == 0) {
            inspectActive(file, listDids, out);
        } else {
            inspectSealed(file, listDids, out);
        }
        return 0;
    }

    private static void inspectSealed(Path file, boolean listDids, PrintStream out) throws IOException {
        SegmentReader r = SegmentReader.open(file, true);
        SegmentHeader h = r.header();
        out.println("state: sealed");
        out.printf("checksum: %016x (verified)%n", h.checksum());
        out.println("version: " + h.version());
        out.println("blocks: " + h.blockCount() + "  events: " + h.eventCount() + "  unique DIDs: " + h.uniqueDidCount());
        out.println("seq: " + seqRange(h.minSeq(), h.maxSeq(), h.eventCount()));
        out.println("witnessed_at: " + timeRange(h.minWitnessedAt(), h.maxWitnessedAt(), h.eventCount()));
        out.println("offsets: footer=" + h.footerOffset() + " block_index=" + h.blockIndexOffset()
                + " did_bloom=" + h.didBloomOffset() + " block_did_bloom=" + h.blockDidBloomOffset()
                + " collection_index=" + h.collectionIndexOffset());
        out.println("footer: " + (r.fileSize() - h.footerOffset()) + " bytes (per-block bloom "
                + r.blockBlooms().bloomSizeBytes() + " bytes each)");
        List<BlockIndexEntry> entries = r.blockIndex().entries();
        printCompression(out, entries);
        printBlocks(out, entries);
        printCollections(out, r.collectionIndex());
        if (listDids) {
            Set<String> dids = new LinkedHashSet<>();
            try (ZstdFrames zstd = new ZstdFrames()) {
                r.forEachRow(zstd, (b, v, i) -> addDid(dids, v, i));
            }
            printDids(out, dids, true);
        } else {
            out.println("DIDs: " + h.uniqueDidCount() + " (list them with --dids)");
        }
    }

    private static void inspectActive(Path file, boolean listDids, PrintStream out) throws IOException {
        ActiveSegmentReader r = ActiveSegmentReader.open(file);
        BlockFraming.Scan scan = r.scan();
        out.println("state: active (not sealed: no footer yet; every figure below is computed from the blocks)");
        List<BlockIndexEntry> entries = new ArrayList<>();
        Set<String> dids = new LinkedHashSet<>();
        CollectionIndex.Builder collections = new CollectionIndex.Builder();
        long events = 0;
        try (ZstdFrames zstd = new ZstdFrames()) {
            BlockView v = new BlockView();
            for (int b = 0; b < r.blockCount(); b++) {
                r.block(b, v, zstd);
                collections.addBlock(v);
                long minW = Long.MAX_VALUE;
                long maxW = Long.MIN_VALUE;
                for (int i = 0; i < v.size(); i++) {
                    addDid(dids, v, i);
                    minW = Math.min(minW, v.witnessedAt(i));
                    maxW = Math.max(maxW, v.witnessedAt(i));
                }
                boolean empty = v.size() == 0;
                entries.add(new BlockIndexEntry(scan.offsets()[b], scan.frameLengths()[b], v.bodyLength(), v.size(),
                        empty ? 0 : v.seq(0), empty ? 0 : v.seq(v.size() - 1), empty ? 0 : minW, empty ? 0 : maxW));
                events += v.size();
            }
        }
        out.println("blocks: " + entries.size() + "  events: " + events + "  unique DIDs: " + dids.size());
        if (scan.hasTornTail()) {
            out.println("torn tail: " + (scan.fileSize() - scan.lastGoodOffset())
                    + " bytes after the last complete block (the writer cuts them when it resumes)");
        }
        if (!entries.isEmpty()) {
            BlockIndexEntry first = entries.get(0);
            BlockIndexEntry last = entries.get(entries.size() - 1);
            out.println("seq: " + seqRange(first.minSeq(), last.maxSeq(), events));
        }
        printCompression(out, entries);
        printBlocks(out, entries);
        printCollections(out, collections.build());
        printDids(out, dids, listDids);
    }

    private static void addDid(Set<String> dids, BlockView v, int i) {
        if (v.didLength(i) > 0) {
            dids.add(v.did(i));
        }
    }

    private static String seqRange(long min, long max, long events) {
        return events == 0 ? "none" : Long.toUnsignedString(min) + ".." + Long.toUnsignedString(max);
    }

    private static String timeRange(long min, long max, long events) {
        if (events == 0) {
            return "none";
        }
        return min + ".." + max + " (" + micros(min) + " .. " + micros(max) + ")";
    }

    private static Instant micros(long us) {
        return Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000L);
    }

    private static void printCompression(PrintStream out, List<BlockIndexEntry> entries) {
        long compressed = 0;
        long raw = 0;
        for (BlockIndexEntry e : entries) {
            compressed += e.compressedSize();
            raw += e.uncompressedSize();
        }
        out.printf("compression: %d bytes of block bodies in %d bytes of frames (ratio %s)%n", raw, compressed,
                compressed == 0 ? "n/a" : String.format("%.2f", (double) raw / compressed));
    }

    private static void printBlocks(PrintStream out, List<BlockIndexEntry> entries) {
        out.printf("%6s %12s %10s %12s %7s %20s %20s %17s %17s%n", "block", "offset", "compressed", "uncompressed",
                "events", "min_seq", "max_seq", "min_witnessed", "max_witnessed");
        for (int i = 0; i < entries.size(); i++) {
            BlockIndexEntry e = entries.get(i);
            out.printf("%6d %12d %10d %12d %7d %20s %20s %17d %17d%n", i, e.offset(), e.compressedSize(),
                    e.uncompressedSize(), e.eventCount(), Long.toUnsignedString(e.minSeq()),
                    Long.toUnsignedString(e.maxSeq()), e.minWitnessedAt(), e.maxWitnessedAt());
        }
    }

    private static void printCollections(PrintStream out, CollectionIndex c) {
        out.println("collections: " + c.collectionCount());
        for (int id = 0; id < c.collectionCount(); id++) {
            String name = c.name(id);
            int blocks = c.blocksFor(name).cardinality();
            out.printf("  %-40s %10s  in %d block(s)%n", name,
                    name.startsWith("$") ? "(marker)" : Long.toString(c.count(id)), blocks);
        }
    }

    private static void printDids(PrintStream out, Set<String> dids, boolean list) {
        out.println("DIDs: " + dids.size() + (list ? "" : " (list them with --dids)"));
        if (list) {
            for (String d : dids) {
                out.println("  " + d);
            }
        }
    }

    /**
     * {@code verify <file|dir>...}: full structural check of sealed files (every {@code seg_*.jss}
     * of a directory). An active file passes when every complete block decodes in seq order and it
     * is the highest-index file of its directory (the only place an active file may be). Exit 0
     * when all pass; 1 with a one-line reason per bad file otherwise.
     */
    static int verify(List<Path> paths) throws IOException {
        int bad = 0;
        int total = 0;
        for (Path p : paths) {
            List<Path> files = new ArrayList<>();
            if (Files.isDirectory(p)) {
                for (SegmentName.Entry e : SegmentName.scan(p)) {
                    files.add(e.path());
                }
            } else {
                files.add(p);
            }
            for (int i = 0; i < files.size(); i++) {
                Path f = files.get(i);
                String reason = check(f, i == files.size() - 1);
                total++;
                if (reason.startsWith("ok")) {
                    System.out.println(f + ": " + reason);
                } else {
                    bad++;
                    System.out.println(f + ": FAIL " + reason);
                }
            }
        }
        System.out.println(total + " file(s), " + bad + " bad");
        return bad == 0 ? 0 : 1;
    }

    /** "ok..." when {@code f} passes, otherwise the one-line reason. */
    private static String check(Path f, boolean lastInDirectory) {
        byte[] head = new byte[12];
        try (FileChannel ch = FileChannel.open(f)) {
            ch.read(ByteBuffer.wrap(head), 0);
        } catch (IOException e) {
            return "IO: " + e;
        }
        if (!SegmentHeader.hasMagic(head, 0) || SegmentHeader.storedChecksum(head, 0) != 0) {
            SegmentVerifier.Result r = SegmentVerifier.verify(f);
            return r.ok() ? "ok (sealed, " + r.blocks() + " blocks, " + r.events() + " events)" : r.reason();
        }
        if (!lastInDirectory) {
            return "ACTIVE_SEGMENT: active file is not the newest in its directory";
        }
        try (ZstdFrames zstd = new ZstdFrames()) {
            ActiveSegmentReader r = ActiveSegmentReader.open(f);
            BlockView v = new BlockView();
            long prev = 0;
            long events = 0;
            for (int b = 0; b < r.blockCount(); b++) {
                r.block(b, v, zstd);
                for (int i = 0; i < v.size(); i++) {
                    if (events > 0 && Long.compareUnsigned(v.seq(i), prev) <= 0) {
                        return "CORRUPT_SEGMENT: block " + b + " row " + i + " seq does not ascend";
                    }
                    prev = v.seq(i);
                    events++;
                }
            }
            BlockFraming.Scan scan = r.scan();
            return "ok (active, " + r.blockCount() + " blocks, " + events + " events"
                    + (scan.hasTornTail() ? ", torn tail of " + (scan.fileSize() - scan.lastGoodOffset()) + " bytes" : "")
                    + ")";
        } catch (SegmentException e) {
            return e.oneLine();
        } catch (IOException e) {
            return "IO: " + e;
        }
    }
}
