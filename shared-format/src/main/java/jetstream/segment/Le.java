package jetstream.segment;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Little-endian access to byte arrays; every multi-byte integer on disk is LE. */
final class Le {
    private Le() {}

    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    static int u8(byte[] b, int off) {
        return b[off] & 0xFF;
    }

    static int u16(byte[] b, int off) {
        return ((short) SHORT.get(b, off)) & 0xFFFF;
    }

    static int i32(byte[] b, int off) {
        return (int) INT.get(b, off);
    }

    static long u32(byte[] b, int off) {
        return ((int) INT.get(b, off)) & 0xFFFFFFFFL;
    }

    static long i64(byte[] b, int off) {
        return (long) LONG.get(b, off);
    }

    static void put16(byte[] b, int off, int v) {
        SHORT.set(b, off, (short) v);
    }

    static void put32(byte[] b, int off, int v) {
        INT.set(b, off, v);
    }

    static void put64(byte[] b, int off, long v) {
        LONG.set(b, off, v);
    }
}
