package jetstream.ingester.backfill;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.mst.MstWalker;
import jetstream.atproto.sync.Commit;

/**
 * A repository CAR spooled to a file ({@link CarSpool}), read without holding it in heap: one
 * streaming pass checks every block against its CID and keeps only an index (CID → offset and
 * length in the file); the MST walk then reads nodes and records from the file. The same checks
 * as {@link jetstream.atproto.sync.Repo}: exactly one root, the root is the commit block.
 */
final class SpooledCar implements AutoCloseable {
    private final FileChannel ch;
    private final Map<Cid, long[]> index;
    private final Commit commit;

    /** Receives each record: its MST key, CID and block bytes (null when absent from the CAR). */
    @FunctionalInterface
    interface RecordVisitor {
        void record(byte[] key, Cid cid, byte[] block);
    }

    private SpooledCar(FileChannel ch, Map<Cid, long[]> index, Commit commit) {
        this.ch = ch;
        this.index = index;
        this.commit = commit;
    }

    /** @throws DecodeException on a malformed CAR or commit (as {@code Repo.read}) */
    static SpooledCar open(Path file) throws IOException {
        Map<Cid, long[]> index = new HashMap<>();
        List<Cid> roots;
        try (Counting in = new Counting(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            CarReader r = CarReader.open(in);
            roots = r.roots();
            for (CarBlock b; (b = r.next()) != null; ) {
                index.put(b.cid(), new long[] {in.count - b.length(), b.length()});
            }
        }
        if (roots.size() != 1) {
            throw new DecodeException("repo_roots", "a repository CAR must have exactly one root, got " + roots.size());
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        try {
            byte[] c = read(ch, index.get(roots.get(0)));
            if (c == null) {
                throw new DecodeException("missing_commit_block", "the CAR root (commit) block is absent");
            }
            SpooledCar car = new SpooledCar(ch, index, Commit.decode(c));
            ch = null;
            return car;
        } finally {
            if (ch != null) {
                ch.close();
            }
        }
    }

    Commit commit() {
        return commit;
    }

    /** Visits every record in key order; returns their number. */
    long walk(RecordVisitor visitor) {
        BlockStore blocks = cid -> block(cid);
        return MstWalker.walk(commit.data(), blocks, (key, cid) -> visitor.record(key, cid, block(cid)));
    }

    private byte[] block(Cid cid) {
        try {
            return read(ch, index.get(cid));
        } catch (IOException e) {
            throw new UncheckedIOException("reading a spooled CAR", e);
        }
    }

    private static byte[] read(FileChannel ch, long[] at) throws IOException {
        if (at == null) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate((int) at[1]);
        while (b.hasRemaining()) {
            if (ch.read(b, at[0] + b.position()) < 0) {
                throw new IOException("spooled CAR shorter than its index");
            }
        }
        return b.array();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }

    /** Counts the bytes the CAR reader consumed, to locate each block in the file. */
    private static final class Counting extends FilterInputStream {
        long count;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long s = super.skip(n);
            count += s;
            return s;
        }
    }
}
