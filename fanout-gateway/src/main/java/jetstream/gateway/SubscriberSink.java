package jetstream.gateway;

/**
 * The transport side of one subscriber (a WebSocket connection, or a recording sink in tests).
 * Writes carry no per-frame future or callback: the subscriber writes a batch of shared frames,
 * flushes once, and reads its bytes in flight from the transport ({@link #pendingBytes}, {@link
 * #writable}); the transport calls back only when it drains below its cap or fails.
 * {@link #execute} runs a task on the connection's own thread, where every {@link Subscriber}
 * state change and every write happens.
 */
public interface SubscriberSink {
    /** What the transport reports back; set once, before the first write. */
    interface Listener {
        /** The bytes in flight fell below the cap after {@link #writable} said false (any thread). */
        void drained();

        /** A write failed (any thread); the connection is going away. */
        void failed();
    }

    void listen(Listener listener);

    /** Queues a frame shared by many subscribers (never modified); goes out at the next {@link #flush}. */
    void write(WsFrame frame);

    /** Sends what was written since the last flush. */
    void flush();

    /** False once the bytes written and not yet taken by the socket reach the queued-byte cap. */
    boolean writable();

    /** Bytes written and not yet taken by the socket; safe from any thread. */
    long pendingBytes();

    /**
     * Bytes this sink's writes have queued on the socket in all, as the socket counts them (after
     * per-connection compression); with {@link #pendingBytes} it tells whether the socket takes any.
     * Safe from any thread.
     */
    long writtenBytes();

    void close(int code, String reason);

    void execute(Runnable task);
}
