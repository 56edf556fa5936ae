package jetstream.atproto.sync;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import jetstream.testing.Vectors;

/**
 * Minimal reading of the relay frame corpus for verification tests (the general frame model lives
 * in the firehose package): {@code [u32 LE length][header item][body item]} per frame.
 */
final class RelayFrames {
    private RelayFrames() {}

    /** A {@code #commit} body with the fields verification uses. */
    record CommitEvent(String repo, String rev, Cid commit, byte[] blocks, List<RepoOp> ops, Cid prevData) {
        VerifyResult verify(DidDocument doc) {
            return CommitVerifier.verify(repo, rev, commit, blocks, 0, blocks.length, ops, prevData,
                    doc == null ? null : doc.signingKey());
        }
    }

    static List<byte[]> frames() {
        ByteBuffer b = ByteBuffer.wrap(Vectors.bytes("jetstream-corpus/relay_frames.bin")).order(ByteOrder.LITTLE_ENDIAN);
        List<byte[]> frames = new ArrayList<>();
        while (b.hasRemaining()) {
            byte[] f = new byte[b.getInt()];
            b.get(f);
            frames.add(f);
        }
        return frames;
    }

    /** The frame's {@code t}, e.g. "#commit". */
    static String type(byte[] frame) {
        int headerLen = DagCbor.itemLength(frame, 0, frame.length);
        return (String) DagCbor.decodeMap(frame, 0, headerLen).get("t");
    }

    static Map<String, Object> body(byte[] frame) {
        int headerLen = DagCbor.itemLength(frame, 0, frame.length);
        return DagCbor.decodeMap(frame, headerLen, frame.length - headerLen);
    }

    @SuppressWarnings("unchecked")
    static CommitEvent commit(byte[] frame) {
        Map<String, Object> m = body(frame);
        List<RepoOp> ops = new ArrayList<>();
        for (Object o : (List<Object>) m.get("ops")) {
            Map<String, Object> op = (Map<String, Object>) o;
            ops.add(new RepoOp((String) op.get("action"), (String) op.get("path"), (Cid) op.get("cid"), (Cid) op.get("prev")));
        }
        return new CommitEvent((String) m.get("repo"), (String) m.get("rev"), (Cid) m.get("commit"),
                (byte[]) m.get("blocks"), ops, (Cid) m.get("prevData"));
    }

    static Map<String, DidDocument> didDocs() {
        byte[] zst = Vectors.bytes("jetstream-corpus/did_docs.json.zst");
        byte[] json = Zstd.decompress(zst, (int) Zstd.getFrameContentSize(zst));
        Map<String, DidDocument> docs = new HashMap<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String did = p.currentName();
                p.nextToken();
                docs.put(did, DidDocument.read(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }
}
