package jetstream.feed;

import java.util.Arrays;

/**
 * One frame of the readable-log feed (docs/feed-protocol.md). Byte values of {@link #type()} are
 * part of the protocol. Times are unix microseconds, like the segment columns.
 */
public sealed interface FeedFrame {
    byte SUBSCRIBE = 0x01;
    byte SUBSCRIBED = 0x02;
    byte TOO_OLD = 0x03;
    byte AUTH_CHALLENGE = 0x04;
    byte AUTH = 0x05;
    byte READ_ACTIVE = 0x06;
    byte EVENT = 0x10;
    byte WATERMARK = 0x11;
    byte VACANCY = 0x12;
    byte SEGMENT_SEALED = 0x13;
    byte SEGMENT_REWRITTEN = 0x14;
    byte PHASE = 0x15;
    byte WRITER_RUNNING = 0x16;
    byte BACKFILL_PROGRESS = 0x17;
    byte COMPACTION_DEADLINE = 0x18;
    byte IMPORT_STATUS = 0x19;
    byte HEARTBEAT = 0x1A;
    byte ACTIVE_BLOCK = 0x1B;
    byte ACTIVE_END = 0x1C;

    byte type();

    /**
     * Reader → ingester, the first and only frame a reader sends: deliver events with
     * {@code seq >= fromSeq}; {@code fromSeq = 0} means "from the next event appended" (live tip).
     */
    record Subscribe(long fromSeq) implements FeedFrame {
        public static final long LIVE = 0;

        public byte type() {
            return SUBSCRIBE;
        }
    }

    /**
     * Ingester → reader, the answer to an accepted subscribe. {@code startSeq} is the first seq
     * that will be offered (the next event may be higher: vacancies and dropped rows are gaps);
     * {@code floorSeq} the lowest seq still in the readable log (0 when it is empty);
     * {@code durableSeq} the durable watermark; {@code nextSeq} the next seq the writer allocates.
     */
    record Subscribed(long startSeq, long floorSeq, long durableSeq, long nextSeq) implements FeedFrame {
        public byte type() {
            return SUBSCRIBED;
        }
    }

    /**
     * Ingester → reader: {@code requestedSeq} is below the readable log's floor; read segment files
     * up to {@code floorSeq - 1}, then subscribe again. The ingester closes the connection after it.
     */
    record TooOld(long requestedSeq, long floorSeq) implements FeedFrame {
        public byte type() {
            return TOO_OLD;
        }
    }

    /**
     * Ingester → reader, first frame of a TCP feed connection: a fresh random {@code nonce}
     * ({@link FeedAuth#NONCE_BYTES} bytes) the reader must answer with {@link Auth}.
     */
    record AuthChallenge(byte[] nonce) implements FeedFrame {
        public byte type() {
            return AUTH_CHALLENGE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof AuthChallenge a && Arrays.equals(nonce, a.nonce);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(nonce);
        }
    }

    /** Reader → ingester on TCP, before {@link Subscribe}: {@code mac = HMAC-SHA256(secret, nonce)}. */
    record Auth(byte[] mac) implements FeedFrame {
        public byte type() {
            return AUTH;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Auth a && Arrays.equals(mac, a.mac);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(mac);
        }
    }

    /**
     * Reader → ingester on TCP, after {@link Auth} instead of {@link Subscribe}: send the complete,
     * durable blocks of the active segment files holding seqs {@code >= fromSeq} (and below
     * {@code untilSeq}, 0 = no bound) witnessed at or after {@code fromTime} (µs, 0 = any; a time
     * cursor's search), about {@code maxBytes} of block frames at most, then {@link ActiveEnd}; the
     * ingester closes after it.
     */
    record ReadActive(long fromSeq, long untilSeq, long fromTime, long maxBytes) implements FeedFrame {
        public byte type() {
            return READ_ACTIVE;
        }
    }

    /**
     * Ingester → reader, an answer to {@link ReadActive}: one complete block of active segment file
     * {@code segment} (its index) at file {@code offset}, its seq envelope and row count, and its zstd
     * frame exactly as on disk (what the file will still hold at that offset once sealed).
     */
    record ActiveBlock(long segment, long offset, long minSeq, long maxSeq, long eventCount, byte[] frame)
            implements FeedFrame {
        public byte type() {
            return ACTIVE_BLOCK;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ActiveBlock b && segment == b.segment && offset == b.offset && minSeq == b.minSeq
                    && maxSeq == b.maxSeq && eventCount == b.eventCount && Arrays.equals(frame, b.frame);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(segment) * 31 + Long.hashCode(offset);
        }

        @Override
        public String toString() {
            return "ActiveBlock[segment=" + segment + ", offset=" + offset + ", seqs=" + minSeq + ".." + maxSeq
                    + ", frame=" + frame.length + " bytes]";
        }
    }

    /**
     * Ingester → reader, the last frame of a {@link ReadActive} answer: {@code activeFrom} is the seq
     * after the ingester's last sealed segment (1 when none is sealed): lower seqs are the archive's;
     * {@code durableSeq} the watermark the answer was cut at.
     */
    record ActiveEnd(long activeFrom, long durableSeq) implements FeedFrame {
        public byte type() {
            return ACTIVE_END;
        }
    }

    /** One archived row, byte for byte the segment columns. Empty arrays for absent fields. */
    record Event(long seq, long witnessedAt, long indexedAt, int kind,
                 byte[] did, byte[] collection, byte[] rkey, byte[] rev, byte[] payload) implements FeedFrame {
        public byte type() {
            return EVENT;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Event e && seq == e.seq && witnessedAt == e.witnessedAt && indexedAt == e.indexedAt
                    && kind == e.kind && Arrays.equals(did, e.did) && Arrays.equals(collection, e.collection)
                    && Arrays.equals(rkey, e.rkey) && Arrays.equals(rev, e.rev) && Arrays.equals(payload, e.payload);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(seq) * 31 + Arrays.hashCode(payload);
        }

        @Override
        public String toString() {
            return "Event[seq=" + seq + ", kind=" + kind + ", did=" + new String(did, java.nio.charset.StandardCharsets.UTF_8)
                    + ", payload=" + payload.length + " bytes]";
        }
    }

    /** Every event with {@code seq <= durableSeq} is fsynced and its metadata batch committed. */
    record Watermark(long durableSeq) implements FeedFrame {
        public byte type() {
            return WATERMARK;
        }
    }

    /** A registered vacancy (also in {@link VacancyFile}); sent at subscribe for all known ones, then as registered. */
    record VacancyNotice(Vacancy vacancy) implements FeedFrame {
        public byte type() {
            return VACANCY;
        }
    }

    /** A segment file was sealed: {@code checksum} is its header checksum (XXH3-64). */
    record SegmentSealed(String name, long checksum, long minSeq, long maxSeq, long eventCount, long fileSize)
            implements FeedFrame {
        public byte type() {
            return SEGMENT_SEALED;
        }
    }

    /** A sealed segment file was replaced by a rewrite (compaction, timestamp import). */
    record SegmentRewritten(String name, long checksum, long fileSize) implements FeedFrame {
        public byte type() {
            return SEGMENT_REWRITTEN;
        }
    }

    /**
     * The lifecycle phase; sent at subscribe ({@code previous == NONE}) and on every change.
     * {@code enteredAt} is the persisted {@code phase/entered_at} (0 when unknown).
     */
    record Phase(LifecyclePhase phase, LifecyclePhase previous, long enteredAt) implements FeedFrame {
        public byte type() {
            return PHASE;
        }
    }

    /** Whether the steady writer (the one whose seqs clients may see) is open. */
    record WriterRunning(boolean running) implements FeedFrame {
        public byte type() {
            return WRITER_RUNNING;
        }
    }

    /**
     * The {@code backfill/counts} aggregate and the host outcomes ({@code hosts}, null when not
     * reported: a frame from an ingester that predates them).
     */
    record BackfillProgress(long total, long discovered, long pending, long complete, long failed, long unavailable,
                            Hosts hosts) implements FeedFrame {
        /**
         * Roster hosts, drained, exhausted (the bootstrap may end with some) and retrying (parked for
         * their retry, or exhausted hosts that failed a steady-state re-enumeration and wait for the next).
         */
        public record Hosts(long total, long drained, long exhausted, long retrying) {}

        /** Repo counts alone: the host outcomes not reported. */
        public BackfillProgress(long total, long discovered, long pending, long complete, long failed, long unavailable) {
            this(total, discovered, pending, complete, failed, unavailable, null);
        }

        public byte type() {
            return BACKFILL_PROGRESS;
        }
    }

    /**
     * Compaction scheduling (docs/lifecycle.md: Compaction). {@code deadline}: when the next pass may rewrite sealed
     * files, 0 = none scheduled (compaction disabled or not yet planned); while a pass runs it is that
     * pass's start, so readers computing a cache lifetime from it need no other field.
     * {@code runningSince}: start of the running pass, 0 when none runs. {@code watermarkSeq}:
     * {@code compaction/seq}. {@code segmentsDone}/{@code segmentsTotal}: the running pass's
     * rewrite progress (the last pass's when none runs).
     */
    record CompactionDeadline(long deadline, long watermarkSeq, long runningSince, long segmentsDone,
                              long segmentsTotal) implements FeedFrame {
        public static final CompactionDeadline NONE = new CompactionDeadline(0, 0, 0, 0, 0);

        public byte type() {
            return COMPACTION_DEADLINE;
        }
    }

    /** The current timestamp-import job; {@code jobId} empty when there is none. */
    record ImportStatus(String jobId, String state, long rowsParsed, long rowsMatched, long segmentsPatched,
                        long updatedAt) implements FeedFrame {
        public byte type() {
            return IMPORT_STATUS;
        }
    }

    /** Sent when the connection has been idle for the heartbeat interval; readers treat silence as a dead feed. */
    record Heartbeat(long time, long nextSeq, long durableSeq) implements FeedFrame {
        public byte type() {
            return HEARTBEAT;
        }
    }
}
