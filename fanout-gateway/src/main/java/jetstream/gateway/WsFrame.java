package jetstream.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;

/**
 * One message as it goes on the wire, built once per event, wire and compression and written to
 * every subscriber's socket as it is: the WebSocket frame header(s) and the payload in one array.
 * The bytes are exactly what Netty's server frame encoder (RFC 6455, unmasked, no extension) writes
 * for the same message fragmented as Vert.x's message writers do ({@link #MAX_FRAME} bytes per
 * frame): proven by {@code WsFrameGoldenTest}. Shared, never modified: the wire buffer is
 * unreleasable, so each write hands the socket a {@link ByteBuf#duplicate() duplicate} (its own
 * indices, the same bytes, no reference count to contend on) and the array is the garbage
 * collector's to free.
 */
public final class WsFrame {
    /** Vert.x's default {@code maxWebSocketFrameSize}, the fragment size of its message writers. */
    static final int MAX_FRAME = 65_536;
    private static final int FIN = 0x80;
    static final int OP_CONTINUATION = 0;
    static final int OP_TEXT = 1;
    static final int OP_BINARY = 2;

    private final ByteBuf wire;
    private final ByteBuf payloadBuf;
    private final Buffer payload;
    private final boolean binary;

    private WsFrame(ByteBuf wire, ByteBuf payload, boolean binary) {
        this.wire = Unpooled.unreleasableBuffer(wire);
        this.payloadBuf = Unpooled.unreleasableBuffer(payload);
        this.payload = Buffer.buffer(this.payloadBuf);
        this.binary = binary;
    }

    /** A text message from its UTF-8 bytes, on the heap. */
    public static WsFrame text(byte[] utf8) {
        return of(utf8, false, false);
    }

    /** A binary message, on the heap. */
    public static WsFrame binary(byte[] bytes) {
        return of(bytes, true, false);
    }

    /**
     * A message in direct memory when {@code direct} (for frames written to many sockets: a heap
     * buffer is copied into a pooled direct one on every socket write, the largest cost of the write
     * path). Freed with the frame by the garbage collector, like the heap form; its bytes count in
     * the ring's budget the same.
     */
    public static WsFrame of(byte[] payload, boolean binary, boolean direct) {
        int op = binary ? OP_BINARY : OP_TEXT;
        if (payload.length <= MAX_FRAME) {
            // one array: header then payload; the payload view shares it
            int h = headerLength(payload.length);
            byte[] a = new byte[h + payload.length];
            header(a, 0, FIN | op, payload.length);
            System.arraycopy(payload, 0, a, h, payload.length);
            ByteBuf wire = wrap(a, direct);
            return new WsFrame(wire, wire.slice(h, payload.length), binary);
        }
        // rare (over 64 KiB): fragments interleave headers, so the payload keeps its own array
        int frames = (payload.length + MAX_FRAME - 1) / MAX_FRAME;
        int size = payload.length;
        for (int off = 0; off < payload.length; off += MAX_FRAME) {
            size += headerLength(Math.min(MAX_FRAME, payload.length - off));
        }
        byte[] a = new byte[size];
        int at = 0;
        for (int i = 0; i < frames; i++) {
            int off = i * MAX_FRAME;
            int len = Math.min(MAX_FRAME, payload.length - off);
            at = header(a, at, (i == frames - 1 ? FIN : 0) | (i == 0 ? op : OP_CONTINUATION), len);
            System.arraycopy(payload, off, a, at, len);
            at += len;
        }
        return new WsFrame(wrap(a, direct), Unpooled.wrappedBuffer(payload), binary);
    }

    private static ByteBuf wrap(byte[] a, boolean direct) {
        if (!direct || a.length == 0) {
            return Unpooled.wrappedBuffer(a);
        }
        // a JDK direct buffer: Netty's wrapper of it does not free it on release, the JDK's cleaner does
        java.nio.ByteBuffer d = java.nio.ByteBuffer.allocateDirect(a.length);
        d.put(a).flip();
        return Unpooled.wrappedBuffer(d);
    }

    static int headerLength(int len) {
        return len <= 125 ? 2 : len <= 0xFFFF ? 4 : 10;
    }

    /** Writes an unmasked server frame header at {@code at}; returns the offset after it. */
    private static int header(byte[] a, int at, int first, int len) {
        a[at++] = (byte) first;
        if (len <= 125) {
            a[at++] = (byte) len;
        } else if (len <= 0xFFFF) {
            a[at++] = 126;
            a[at++] = (byte) (len >>> 8);
            a[at++] = (byte) len;
        } else {
            a[at++] = 127;
            for (int s = 56; s >= 0; s -= 8) {
                a[at++] = (byte) ((long) len >>> s);
            }
        }
        return at;
    }

    /** The whole message on the wire (every fragment's header and bytes): a fresh duplicate to write. */
    public ByteBuf wire() {
        return wire.duplicate();
    }

    /** Bytes on the wire, headers included. */
    public int wireBytes() {
        return wire.readableBytes();
    }

    /** The message itself (what a permessage-deflate connection compresses, what the size cap compares). */
    public Buffer payload() {
        return payload;
    }

    /**
     * Bytes {@code from}..{@code to} of the message as a fresh view to write (the fragments a
     * permessage-deflate connection compresses frame by frame).
     */
    ByteBuf payload(int from, int to) {
        return payloadBuf.slice(from, to - from);
    }

    public int payloadBytes() {
        return payload.length();
    }

    public boolean binary() {
        return binary;
    }

    /** Approximate heap weight beyond the payload (headers, and the payload copy of a fragmented message). */
    long overheadBytes() {
        return 64L + wire.readableBytes() - (payload.length() <= MAX_FRAME ? payload.length() : 0);
    }
}
