package jetstream.gateway;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.github.luben.zstd.Zstd;

import io.vertx.core.buffer.Buffer;

/** A subscriber transport that records frames, acknowledging writes on a single "connection" thread. */
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
    final byte[] dictionary;

    RecordingSink(byte[] dictionary) {
        this.dictionary = dictionary;
    }

    @Override
    public void sendText(Buffer utf8, Runnable done, Runnable failed) {
        frames.add(utf8.toString());
        if (acknowledge) {
            thread.execute(done);
        }
    }

    @Override
    public void sendBinary(Buffer frame, Runnable done, Runnable failed) {
        byte[] c = frame.getBytes();
        byte[] out = new byte[(int) Zstd.getFrameContentSize(c)];
        int n = (int) Zstd.decompressUsingDict(out, 0, c, 0, c.length, dictionary);
        frames.add(new String(out, 0, n, java.nio.charset.StandardCharsets.UTF_8));
        if (acknowledge) {
            thread.execute(done);
        }
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
