package jetstream.atproto.car;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.cid.Varint;

/** Writes a CAR v1 stream: the header on construction, then one frame per block. Does not close the stream. */
public final class CarWriter {
    private final OutputStream out;
    private final byte[] varint = new byte[Varint.MAX_BYTES];

    public CarWriter(OutputStream out, List<Cid> roots) throws IOException {
        this.out = out;
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("roots", List.copyOf(roots));
        header.put("version", 1L);
        byte[] h = DagCbor.encode(header);
        writeVarint(h.length);
        out.write(h);
    }

    /** Writes a block under a CID the caller vouches for (e.g. one it computed). */
    public void write(Cid cid, byte[] data, int off, int len) throws IOException {
        byte[] c = cid.toBytes();
        writeVarint((long) c.length + len);
        out.write(c);
        out.write(data, off, len);
    }

    /** Writes a DAG-CBOR block and returns its CID. */
    public Cid writeDagCbor(byte[] data) throws IOException {
        Cid cid = Cid.ofDagCbor(data);
        write(cid, data, 0, data.length);
        return cid;
    }

    private void writeVarint(long v) throws IOException {
        out.write(varint, 0, Varint.encode(v, varint, 0));
    }

    /** A whole CAR in memory: the given roots, then the blocks in iteration order. */
    public static byte[] toBytes(List<Cid> roots, Map<Cid, byte[]> blocks) {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try {
            CarWriter w = new CarWriter(bos, roots);
            for (Map.Entry<Cid, byte[]> e : blocks.entrySet()) {
                w.write(e.getKey(), e.getValue(), 0, e.getValue().length);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }
}
