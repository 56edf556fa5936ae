package jetstream.gateway;

import io.vertx.core.buffer.Buffer;

/**
 * The transport side of one subscriber (a WebSocket connection, or a recording sink in tests).
 * Completion callbacks may run on any thread; {@link #execute} runs a task on the connection's own
 * thread, where every {@link Subscriber} state change happens.
 */
public interface SubscriberSink {
    /** A text frame from its UTF-8 bytes (shared across subscribers: never modified). */
    void sendText(Buffer utf8, Runnable done, Runnable failed);

    void sendBinary(Buffer frame, Runnable done, Runnable failed);

    void close(int code, String reason);

    void execute(Runnable task);
}
