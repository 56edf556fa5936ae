package jetstream.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import com.github.luben.zstd.Zstd;

/**
 * A subscriber transport that records frames and models a socket: written frames are pending until
 * flushed and acknowledged (on a single "connection" thread), {@link #writable()} is false at the
 * queued-byte cap, and crossing back below it calls the listener's drain, as Netty's writability does.
 */
class RecordingSink implements SubscriberSink {
    final List<String> frames = new CopyOnWriteArrayList<>();
    final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "recording-sink");
        t.setDaemon(true);
        return t;
    });
    volatile int closeCode;
    volatile String closeReason;
    /** When false, writes are never acknowledged (a client that stopped reading). */
    volatile boolean acknowledge = true;
    /** When false, frames are not decoded into {@link #frames} (load tests). */
    volatile boolean record = true;
    /** The queued-byte cap (the channel's high water mark). */
    volatile long cap = SubscribeSettings.defaults().queuedByteCap();
    final byte[] dictionary;
    final AtomicLong pending = new AtomicLong();
    final AtomicLong written = new AtomicLong();
    volatile int flushes;
    private final List<WsFrame> unflushed = new ArrayList<>();
    volatile Listener listener;

    RecordingSink(byte[] dictionary) {
        this.dictionary = dictionary;
    }

    @Override
    public void listen(Listener l) {
        listener = l;
    }

    @Override
    public void write(WsFrame f) {
        if (record && f.binary()) {
            byte[] c = f.payload().getBytes();
            byte[] out = new byte[(int) Zstd.getFrameContentSize(c)];
            int n = (int) Zstd.decompressUsingDict(out, 0, c, 0, c.length, dictionary);
            frames.add(new String(out, 0, n, java.nio.charset.StandardCharsets.UTF_8));
        } else if (record) {
            frames.add(f.payload().toString());
        }
        unflushed.add(f);
        pending.addAndGet(f.wireBytes());
        written.addAndGet(f.wireBytes());
    }

    @Override
    public void flush() {
        flushes++;
        for (WsFrame f : unflushed) {
            flushed(f);
        }
        unflushed.clear();
    }

    /** A frame went to the "socket": acknowledged at once on the connection thread unless told otherwise. */
    protected void flushed(WsFrame f) {
        if (acknowledge) {
            thread.execute(() -> taken(f));
        }
    }

    /** The "socket" took the frame. */
    protected final void taken(WsFrame f) {
        long left = pending.addAndGet(-f.wireBytes());
        if (left < cap && left + f.wireBytes() >= cap && listener != null) {
            listener.drained();
        }
    }

    @Override
    public boolean writable() {
        return pending.get() < cap;
    }

    @Override
    public long pendingBytes() {
        return pending.get();
    }

    @Override
    public long writtenBytes() {
        return written.get();
    }

    @Override
    public void close(int code, String reason) {
        closeCode = code;
        closeReason = reason;
    }

    @Override
    public void execute(Runnable task) {
        if (!thread.isShutdown()) {
            thread.execute(task);
        }
    }
}
