package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import jetstream.segment.BlockFraming;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.ZstdFrames;

/**
 * The seal's frames, read from disk and decoded in file order on a helper thread a few blocks
 * ahead of the footer build: zstd decompression of every frame is about half of a seal's work and
 * independent of the footer, so on two cores it overlaps the DID hashing instead of adding to it.
 * Stops after the first empty block, as the seal does. A failure of the reader (I/O error, corrupt
 * frame) is handed to the consumer at the block where it happened and thrown there.
 */
final class BlockPrefetch implements AutoCloseable {
    /** Decoded blocks in flight; each holds one decompressed body (≈ 1 MiB at 4096 rows). */
    private static final int DEPTH = 3;

    private final BlockingQueue<BlockView> free = new ArrayBlockingQueue<>(DEPTH);
    private final BlockingQueue<Object> ready = new ArrayBlockingQueue<>(DEPTH + 1);
    private final Thread reader;
    /** Set when the consumer stops early; the reader is never interrupted (that would close the channel). */
    private volatile boolean stopped;

    BlockPrefetch(FileChannel ch, Path path, BlockFraming.Scan scan) {
        for (int i = 0; i < DEPTH; i++) {
            free.add(new BlockView());
        }
        reader = new Thread(() -> read(ch, path, scan), "seal-reader " + path.getFileName());
        reader.setDaemon(true);
        reader.start();
    }

    private void read(FileChannel ch, Path path, BlockFraming.Scan scan) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            byte[] frame = new byte[0];
            for (int i = 0; i < scan.blockCount() && !stopped; i++) {
                long len = scan.frameLengths()[i];
                if (len > Integer.MAX_VALUE - 8) {
                    throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + ": block " + i + " frame of " + len);
                }
                if (frame.length < len) {
                    frame = new byte[(int) Math.max(len, frame.length * 3L / 2)];
                }
                Channels.readFully(ch, ByteBuffer.wrap(frame, 0, (int) len), scan.offsets()[i] + 8);
                BlockView view = free.take();
                view.decodeFrame(zstd, frame, 0, (int) len, -1);
                ready.put(view);
                if (view.size() == 0) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException | Error e) {
            ready.offer(e);
        }
    }

    /** The next block in file order; the caller hands it back with {@link #release} once used. */
    BlockView next() throws IOException {
        Object o;
        try {
            o = ready.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while sealing", e);
        }
        if (o instanceof BlockView v) {
            return v;
        }
        if (o instanceof IOException e) {
            throw e;
        }
        if (o instanceof RuntimeException e) {
            throw e;
        }
        throw (Error) o;
    }

    void release(BlockView view) {
        free.add(view);
    }

    /** Stops the reader (handing it back any block it waits for) and waits for it to end. */
    @Override
    public void close() {
        stopped = true;
        try {
            while (reader.isAlive()) {
                Object o = ready.poll();
                if (o instanceof BlockView v) {
                    free.offer(v);
                }
                reader.join(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
