package jetstream.feed;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import jetstream.atproto.DecodeException;
import jetstream.segment.SegmentLimits;

/**
 * Encodes and decodes feed frames (docs/feed-protocol.md): a u32 big-endian content length, then
 * the content, a type byte followed by the type's fields (big-endian integers, strings as u16
 * length + UTF-8). Decoding is strict: a short or long body, an unknown type, an out-of-range
 * value or invalid UTF-8 throws {@link DecodeException} with a {@code feed_} reason. Stateless.
 */
public final class FeedCodec {
    public static final int LENGTH_PREFIX = 4;
    /** Largest frame content; large enough for any firehose record (relays cap frames far below). */
    public static final int MAX_CONTENT_BYTES = 64 << 20;
    /** Fixed part of an event's content: type, seq, two times, kind, four field lengths, payload length. */
    static final int EVENT_FIXED = 1 + 8 + 8 + 8 + 1 + 1 + 2 + 1 + 1 + 4;
    private static final int MAX_STRING = 0xFFFF;

    private FeedCodec() {}

    /**
     * The content length announced by the prefix at {@code buf[off..off+4)}, validated against
     * {@link #MAX_CONTENT_BYTES}.
     */
    public static int contentLength(byte[] buf, int off) {
        int n = ((buf[off] & 0xFF) << 24) | ((buf[off + 1] & 0xFF) << 16) | ((buf[off + 2] & 0xFF) << 8) | (buf[off + 3] & 0xFF);
        if (n < 1 || n > MAX_CONTENT_BYTES) {
            throw new DecodeException("feed_frame_length", "frame length " + Integer.toUnsignedString(n)
                    + " outside 1.." + MAX_CONTENT_BYTES);
        }
        return n;
    }

    /** One event frame (prefix included) from row fields; the ingester encodes each event once for every reader. */
    public static byte[] encodeEvent(long seq, long witnessedAt, long indexedAt, int kind,
                                     byte[] did, int didOff, int didLen,
                                     byte[] collection, int collectionOff, int collectionLen,
                                     byte[] rkey, int rkeyOff, int rkeyLen,
                                     byte[] rev, int revOff, int revLen,
                                     byte[] payload, int payloadOff, int payloadLen) {
        if (kind < 1 || kind > 7) {
            throw new IllegalArgumentException("kind " + kind + " outside 1..7");
        }
        if (didLen > SegmentLimits.MAX_DID_LENGTH || collectionLen > SegmentLimits.MAX_COLLECTION_LENGTH
                || rkeyLen > SegmentLimits.MAX_RKEY_LENGTH || revLen > SegmentLimits.MAX_REV_LENGTH) {
            throw new IllegalArgumentException("event field longer than its segment column");
        }
        long content = (long) EVENT_FIXED + didLen + collectionLen + rkeyLen + revLen + payloadLen;
        if (content > MAX_CONTENT_BYTES) {
            throw new IllegalArgumentException("event of " + content + " bytes exceeds the feed frame limit");
        }
        ByteBuffer b = ByteBuffer.allocate(LENGTH_PREFIX + (int) content);
        b.putInt((int) content).put(FeedFrame.EVENT).putLong(seq).putLong(witnessedAt).putLong(indexedAt)
                .put((byte) kind).put((byte) collectionLen).putShort((short) didLen).put((byte) rkeyLen)
                .put((byte) revLen).putInt(payloadLen);
        b.put(collection, collectionOff, collectionLen).put(did, didOff, didLen).put(rkey, rkeyOff, rkeyLen)
                .put(rev, revOff, revLen).put(payload, payloadOff, payloadLen);
        return b.array();
    }

    /** Fixed part of an active block's content: type, segment, offset, seq envelope, row count. */
    static final int ACTIVE_BLOCK_FIXED = 1 + 8 + 8 + 8 + 8 + 8;

    /** One {@code ACTIVE_BLOCK} frame (prefix included) around a block's zstd frame. */
    public static byte[] encodeActiveBlock(long segment, long offset, long minSeq, long maxSeq, long eventCount,
                                           byte[] frame) {
        long content = (long) ACTIVE_BLOCK_FIXED + frame.length;
        if (content > MAX_CONTENT_BYTES) {
            throw new IllegalArgumentException("block frame of " + frame.length + " bytes exceeds the feed frame limit");
        }
        ByteBuffer b = ByteBuffer.allocate(LENGTH_PREFIX + (int) content);
        b.putInt((int) content).put(FeedFrame.ACTIVE_BLOCK).putLong(segment).putLong(offset).putLong(minSeq)
                .putLong(maxSeq).putLong(eventCount).put(frame);
        return b.array();
    }

    /** The whole frame (prefix included). */
    public static byte[] encode(FeedFrame frame) {
        if (frame instanceof FeedFrame.ActiveBlock a) {
            return encodeActiveBlock(a.segment(), a.offset(), a.minSeq(), a.maxSeq(), a.eventCount(), a.frame());
        }
        if (frame instanceof FeedFrame.Event e) {
            return encodeEvent(e.seq(), e.witnessedAt(), e.indexedAt(), e.kind(), e.did(), 0, e.did().length,
                    e.collection(), 0, e.collection().length, e.rkey(), 0, e.rkey().length, e.rev(), 0, e.rev().length,
                    e.payload(), 0, e.payload().length);
        }
        Out o = new Out();
        o.b.put(frame.type());
        if (frame instanceof FeedFrame.Subscribe f) {
            o.b.putLong(f.fromSeq());
        } else if (frame instanceof FeedFrame.Subscribed f) {
            o.b.putLong(f.startSeq()).putLong(f.floorSeq()).putLong(f.durableSeq()).putLong(f.nextSeq());
        } else if (frame instanceof FeedFrame.TooOld f) {
            o.b.putLong(f.requestedSeq()).putLong(f.floorSeq());
        } else if (frame instanceof FeedFrame.AuthChallenge f) {
            o.fixed(f.nonce(), FeedAuth.NONCE_BYTES);
        } else if (frame instanceof FeedFrame.Auth f) {
            o.fixed(f.mac(), FeedAuth.MAC_BYTES);
        } else if (frame instanceof FeedFrame.ReadActive f) {
            o.b.putLong(f.fromSeq()).putLong(f.untilSeq()).putLong(f.fromTime()).putLong(f.maxBytes());
        } else if (frame instanceof FeedFrame.ActiveEnd f) {
            o.b.putLong(f.activeFrom()).putLong(f.durableSeq());
        } else if (frame instanceof FeedFrame.Watermark f) {
            o.b.putLong(f.durableSeq());
        } else if (frame instanceof FeedFrame.VacancyNotice f) {
            o.b.putLong(f.vacancy().start()).putLong(f.vacancy().end()).put((byte) f.vacancy().reason().code());
        } else if (frame instanceof FeedFrame.SegmentSealed f) {
            o.string(f.name());
            o.b.putLong(f.checksum()).putLong(f.minSeq()).putLong(f.maxSeq()).putLong(f.eventCount()).putLong(f.fileSize());
        } else if (frame instanceof FeedFrame.SegmentRewritten f) {
            o.string(f.name());
            o.b.putLong(f.checksum()).putLong(f.fileSize());
        } else if (frame instanceof FeedFrame.Phase f) {
            o.b.put((byte) f.phase().code()).put((byte) f.previous().code()).putLong(f.enteredAt());
        } else if (frame instanceof FeedFrame.WriterRunning f) {
            o.b.put((byte) (f.running() ? 1 : 0));
        } else if (frame instanceof FeedFrame.BackfillProgress f) {
            o.b.putLong(f.total()).putLong(f.discovered()).putLong(f.pending()).putLong(f.complete())
                    .putLong(f.failed()).putLong(f.unavailable());
            if (f.hosts() != null) {
                o.b.putLong(f.hosts().total()).putLong(f.hosts().drained()).putLong(f.hosts().exhausted())
                        .putLong(f.hosts().retrying());
            }
        } else if (frame instanceof FeedFrame.CompactionDeadline f) {
            o.b.putLong(f.deadline()).putLong(f.watermarkSeq()).putLong(f.runningSince()).putLong(f.segmentsDone())
                    .putLong(f.segmentsTotal());
        } else if (frame instanceof FeedFrame.ImportStatus f) {
            o.string(f.jobId());
            o.string(f.state());
            o.b.putLong(f.rowsParsed()).putLong(f.rowsMatched()).putLong(f.segmentsPatched()).putLong(f.updatedAt());
        } else if (frame instanceof FeedFrame.Heartbeat f) {
            o.b.putLong(f.time()).putLong(f.nextSeq()).putLong(f.durableSeq());
        } else {
            throw new IllegalArgumentException("unknown frame " + frame);
        }
        return o.finish();
    }

    /** Decodes the content {@code buf[off, off+len)} of one frame (the bytes after its length prefix). */
    public static FeedFrame decode(byte[] buf, int off, int len) {
        if (len < 1) {
            throw new DecodeException("feed_truncated", "empty frame");
        }
        In in = new In(buf, off, len);
        byte type = in.u8b();
        FeedFrame f = switch (type) {
            case FeedFrame.SUBSCRIBE -> new FeedFrame.Subscribe(in.u64());
            case FeedFrame.SUBSCRIBED -> new FeedFrame.Subscribed(in.u64(), in.u64(), in.u64(), in.u64());
            case FeedFrame.TOO_OLD -> new FeedFrame.TooOld(in.u64(), in.u64());
            case FeedFrame.AUTH_CHALLENGE -> new FeedFrame.AuthChallenge(in.bytes(FeedAuth.NONCE_BYTES));
            case FeedFrame.AUTH -> new FeedFrame.Auth(in.bytes(FeedAuth.MAC_BYTES));
            case FeedFrame.READ_ACTIVE -> new FeedFrame.ReadActive(in.u64(), in.u64(), in.u64(), in.u64());
            case FeedFrame.ACTIVE_BLOCK -> activeBlock(in);
            case FeedFrame.ACTIVE_END -> new FeedFrame.ActiveEnd(in.u64(), in.u64());
            case FeedFrame.EVENT -> event(in);
            case FeedFrame.WATERMARK -> new FeedFrame.Watermark(in.u64());
            case FeedFrame.VACANCY -> vacancy(in);
            case FeedFrame.SEGMENT_SEALED -> new FeedFrame.SegmentSealed(in.string(), in.u64(), in.u64(), in.u64(),
                    in.u64(), in.u64());
            case FeedFrame.SEGMENT_REWRITTEN -> new FeedFrame.SegmentRewritten(in.string(), in.u64(), in.u64());
            case FeedFrame.PHASE -> new FeedFrame.Phase(in.phase(), in.phase(), in.u64());
            case FeedFrame.WRITER_RUNNING -> new FeedFrame.WriterRunning(in.bool());
            case FeedFrame.BACKFILL_PROGRESS -> backfillProgress(in);
            case FeedFrame.COMPACTION_DEADLINE -> new FeedFrame.CompactionDeadline(in.u64(), in.u64(), in.u64(), in.u64(),
                    in.u64());
            case FeedFrame.IMPORT_STATUS -> new FeedFrame.ImportStatus(in.string(), in.string(), in.u64(), in.u64(),
                    in.u64(), in.u64());
            case FeedFrame.HEARTBEAT -> new FeedFrame.Heartbeat(in.u64(), in.u64(), in.u64());
            default -> throw new DecodeException("feed_unknown_type", "unknown frame type 0x" + Integer.toHexString(type & 0xFF));
        };
        if (in.pos != in.end) {
            throw new DecodeException("feed_trailing_bytes", (in.end - in.pos) + " bytes after a frame of type 0x"
                    + Integer.toHexString(type & 0xFF));
        }
        return f;
    }

    /**
     * Six u64 (an ingester before the host outcomes), or ten with the host outcomes appended; extra
     * bytes that are not the four host fields are trailing bytes.
     */
    private static FeedFrame.BackfillProgress backfillProgress(In in) {
        long total = in.u64();
        long discovered = in.u64();
        long pending = in.u64();
        long complete = in.u64();
        long failed = in.u64();
        long unavailable = in.u64();
        FeedFrame.BackfillProgress.Hosts hosts = null;
        if (in.end - in.pos >= 4 * 8) {
            hosts = new FeedFrame.BackfillProgress.Hosts(in.u64(), in.u64(), in.u64(), in.u64());
        }
        return new FeedFrame.BackfillProgress(total, discovered, pending, complete, failed, unavailable, hosts);
    }

    private static FeedFrame.Event event(In in) {
        long seq = in.u64();
        long witnessed = in.u64();
        long indexed = in.u64();
        int kind = in.u8();
        if (kind < 1 || kind > 7) {
            throw new DecodeException("feed_bad_kind", "event kind " + kind + " outside 1..7");
        }
        int collectionLen = in.u8();
        int didLen = in.u16();
        int rkeyLen = in.u8();
        int revLen = in.u8();
        long payloadLen = in.u32();
        long rest = (long) collectionLen + didLen + rkeyLen + revLen + payloadLen;
        if (rest != in.end - in.pos) {
            throw new DecodeException(rest > in.end - in.pos ? "feed_truncated" : "feed_trailing_bytes",
                    "event fields need " + rest + " bytes, frame has " + (in.end - in.pos));
        }
        byte[] collection = in.bytes(collectionLen);
        byte[] did = in.bytes(didLen);
        byte[] rkey = in.bytes(rkeyLen);
        byte[] rev = in.bytes(revLen);
        byte[] payload = in.bytes((int) payloadLen);
        return new FeedFrame.Event(seq, witnessed, indexed, kind, did, collection, rkey, rev, payload);
    }

    private static FeedFrame.ActiveBlock activeBlock(In in) {
        long segment = in.u64();
        long offset = in.u64();
        long minSeq = in.u64();
        long maxSeq = in.u64();
        long count = in.u64();
        if (minSeq < 1 || maxSeq < minSeq || count < 1 || count > maxSeq - minSeq + 1) {
            throw new DecodeException("feed_bad_value", "active block seqs " + minSeq + ".." + maxSeq + " with "
                    + count + " rows");
        }
        return new FeedFrame.ActiveBlock(segment, offset, minSeq, maxSeq, count, in.bytes(in.end - in.pos));
    }

    private static FeedFrame.VacancyNotice vacancy(In in) {
        long start = in.u64();
        long end = in.u64();
        int code = in.u8();
        Vacancy.Reason reason = Vacancy.Reason.ofCode(code);
        if (reason == null) {
            throw new DecodeException("feed_bad_value", "unknown vacancy reason " + code);
        }
        if (start < 1 || end <= start) {
            throw new DecodeException("feed_bad_value", "vacancy [" + start + ", " + end + ") is not an interval");
        }
        return new FeedFrame.VacancyNotice(new Vacancy(start, end, reason));
    }

    private static final class Out {
        ByteBuffer b = ByteBuffer.allocate(256);

        Out() {
            b.position(LENGTH_PREFIX);
        }

        void string(String s) {
            byte[] u = s.getBytes(StandardCharsets.UTF_8);
            if (u.length > MAX_STRING) {
                throw new IllegalArgumentException("feed string longer than " + MAX_STRING + " bytes");
            }
            if (b.remaining() < 2 + u.length + 64) {
                ByteBuffer bigger = ByteBuffer.allocate(b.capacity() + u.length + 256);
                b.flip();
                bigger.put(b);
                b = bigger;
            }
            b.putShort((short) u.length).put(u);
        }

        void fixed(byte[] v, int len) {
            if (v.length != len) {
                throw new IllegalArgumentException("field of " + v.length + " bytes, expected " + len);
            }
            b.put(v);
        }

        byte[] finish() {
            int content = b.position() - LENGTH_PREFIX;
            b.putInt(0, content);
            byte[] out = new byte[b.position()];
            System.arraycopy(b.array(), 0, out, 0, out.length);
            return out;
        }
    }

    private static final class In {
        final byte[] buf;
        int pos;
        final int end;

        In(byte[] buf, int off, int len) {
            this.buf = buf;
            this.pos = off;
            this.end = off + len;
        }

        void need(int n) {
            if (end - pos < n) {
                throw new DecodeException("feed_truncated", "frame ends " + (n - (end - pos)) + " bytes early");
            }
        }

        byte u8b() {
            need(1);
            return buf[pos++];
        }

        int u8() {
            return u8b() & 0xFF;
        }

        int u16() {
            need(2);
            int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
            pos += 2;
            return v;
        }

        long u32() {
            need(4);
            long v = ((long) (buf[pos] & 0xFF) << 24) | ((buf[pos + 1] & 0xFF) << 16) | ((buf[pos + 2] & 0xFF) << 8)
                    | (buf[pos + 3] & 0xFF);
            pos += 4;
            return v;
        }

        long u64() {
            need(8);
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (buf[pos + i] & 0xFF);
            }
            pos += 8;
            return v;
        }

        boolean bool() {
            int v = u8();
            if (v > 1) {
                throw new DecodeException("feed_bad_value", "boolean byte " + v);
            }
            return v == 1;
        }

        LifecyclePhase phase() {
            int code = u8();
            LifecyclePhase p = LifecyclePhase.ofCode(code);
            if (p == null) {
                throw new DecodeException("feed_bad_value", "unknown phase code " + code);
            }
            return p;
        }

        byte[] bytes(int n) {
            need(n);
            byte[] out = new byte[n];
            System.arraycopy(buf, pos, out, 0, n);
            pos += n;
            return out;
        }

        String string() {
            int n = u16();
            need(n);
            try {
                CharBuffer cb = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(buf, pos, n));
                pos += n;
                return cb.toString();
            } catch (CharacterCodingException e) {
                throw new DecodeException("feed_bad_utf8", "string field is not UTF-8");
            }
        }
    }
}
