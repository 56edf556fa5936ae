package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link SegmentIO} for tests that fails the n-th call of a chosen operation with a chosen fault,
 * and otherwise behaves like production. Every call is logged ("WRITE seg_0000000000.jss") so tests
 * can assert the durability order.
 */
public final class FaultInjectingIO implements SegmentIO {
    public enum Op { CREATE, OPEN, WRITE, FSYNC, TRUNCATE, FSYNC_DIR, RENAME, DELETE }

    public enum Fault {
        /** A generic I/O error ("Input/output error"). */
        IO_ERROR,
        /** Disk full: the message the JDK reports for ENOSPC. */
        ENOSPC,
        /** WRITE only: half of the bytes reach the file, then the call fails (a torn write). */
        SHORT_WRITE
    }

    private record Rule(long atCall, Fault fault) {}

    private final SegmentIO delegate;
    private final Map<Op, Long> calls = new EnumMap<>(Op.class);
    private final Map<Op, List<Rule>> rules = new EnumMap<>(Op.class);
    private final List<String> log = new ArrayList<>();

    public FaultInjectingIO() {
        this(SegmentIO.PRODUCTION);
    }

    /** Passes calls that do not fail to {@code delegate}. */
    public FaultInjectingIO(SegmentIO delegate) {
        this.delegate = delegate;
    }

    /** Fails the {@code nth} (1-based) call of {@code op} made from now on. */
    public synchronized FaultInjectingIO failOn(Op op, int nth, Fault fault) {
        if (nth < 1) {
            throw new IllegalArgumentException("nth must be >= 1");
        }
        if (fault == Fault.SHORT_WRITE && op != Op.WRITE) {
            throw new IllegalArgumentException("SHORT_WRITE applies to WRITE only");
        }
        rules.computeIfAbsent(op, k -> new ArrayList<>()).add(new Rule(calls(op) + nth, fault));
        return this;
    }

    public synchronized long calls(Op op) {
        return calls.getOrDefault(op, 0L);
    }

    public synchronized List<String> log() {
        return List.copyOf(log);
    }

    private synchronized Fault enter(Op op, Path path) {
        long n = calls.merge(op, 1L, Long::sum);
        log.add(op + " " + path.getFileName());
        List<Rule> list = rules.get(op);
        if (list != null) {
            for (Rule r : list) {
                if (r.atCall == n) {
                    return r.fault;
                }
            }
        }
        return null;
    }

    private static IOException error(Fault fault, Op op, Path path) {
        String reason = fault == Fault.ENOSPC ? "No space left on device" : "Input/output error";
        return new IOException(path + ": " + reason + " (injected at " + op + ")");
    }

    private void check(Op op, Path path) throws IOException {
        Fault f = enter(op, path);
        if (f != null) {
            throw error(f, op, path);
        }
    }

    @Override
    public FileChannel create(Path path) throws IOException {
        check(Op.CREATE, path);
        return delegate.create(path);
    }

    @Override
    public FileChannel open(Path path) throws IOException {
        check(Op.OPEN, path);
        return delegate.open(path);
    }

    @Override
    public void write(FileChannel channel, Path path, ByteBuffer src, long position) throws IOException {
        Fault f = enter(Op.WRITE, path);
        if (f == Fault.SHORT_WRITE) {
            ByteBuffer half = src.duplicate();
            half.limit(half.position() + half.remaining() / 2);
            delegate.write(channel, path, half, position);
            src.position(half.position());
            throw new IOException(path + ": short write (injected)");
        }
        if (f != null) {
            throw error(f, Op.WRITE, path);
        }
        delegate.write(channel, path, src, position);
    }

    @Override
    public void fsync(FileChannel channel, Path path) throws IOException {
        check(Op.FSYNC, path);
        delegate.fsync(channel, path);
    }

    @Override
    public void truncate(FileChannel channel, Path path, long size) throws IOException {
        check(Op.TRUNCATE, path);
        delegate.truncate(channel, path, size);
    }

    @Override
    public void fsyncDirectory(Path dir) throws IOException {
        check(Op.FSYNC_DIR, dir);
        delegate.fsyncDirectory(dir);
    }

    @Override
    public void rename(Path source, Path target) throws IOException {
        check(Op.RENAME, source);
        delegate.rename(source, target);
    }

    @Override
    public void delete(Path path) throws IOException {
        check(Op.DELETE, path);
        delegate.delete(path);
    }
}
