package jetstream.bench;

import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedCodec;
import jetstream.ingester.writer.ReadableLog;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;

/**
 * {@link GatewayBench}'s feed: the real relay corpus ({@code jetstream-corpus/relay_frames.bin}) as archive
 * rows, with the mean rendered frame sizes, appended to a readable log at a settable rate (cycled with
 * fresh seqs).
 */
final class CorpusFeed {
    private final List<byte[][]> rows = new ArrayList<>();
    final int meanV1;
    final int meanV2;
    /** The share of the corpus rows v1 shows. */
    final double v1Visible;
    private volatile double rate;

    /** Archive rows of the real relay corpus, as the feed carries them; also the mean rendered frame sizes. */
    CorpusFeed() {
        V1Json v1 = new V1Json();
        V2Json v2 = new V2Json();
        JsonBuffer buf = new JsonBuffer(4096);
        WireEvent w = new WireEvent();
        long v1Bytes = 0;
        long v2Bytes = 0;
        int visible = 0;
        long now = System.currentTimeMillis() * 1000;
        for (ArchiveRow r : BenchCorpus.relayRows()) {
            byte[][] row = BenchCorpus.columns(r);
            rows.add(row);
            byte[] payload = row[5];
            w.set(1_000_000 + rows.size(), now, r.kind(), r.did(), r.collection(), r.rkey(), r.rev(),
                    payload, 0, payload.length);
            buf.reset();
            if (v1.write(w, buf)) {
                v1Bytes += buf.length();
                visible++;
            }
            buf.reset();
            v2.writeMessage(w, buf);
            v2Bytes += buf.length();
        }
        meanV1 = (int) (v1Bytes / Math.max(1, visible));
        meanV2 = (int) (v2Bytes / rows.size());
        v1Visible = visible / (double) rows.size();
        System.out.printf("corpus: %d rows (cycled with fresh seqs), mean v2 frame %d B, mean v1 event %d B%n", rows.size(),
                meanV2, meanV1);
    }

    /** Events per second from now on (0: none). */
    void rate(double perSecond) {
        rate = perSecond;
    }

    /** Starts the producer thread on {@code log}. */
    void start(ReadableLog log) {
        Thread producer = new Thread(() -> produce(log), "bench-feed-producer");
        producer.setDaemon(true);
        producer.start();
    }

    /**
     * Appends events at {@link #rate(double)} per second in 1 ms ticks, each stamped with the wall clock
     * at append; every tick's events are declared durable at once (the gateway's ring unpins them).
     */
    private void produce(ReadableLog log) {
        long offset = GatewayLoadGen.realtimeOffsetMicros();
        long seq = 1;
        RatePacer pacer = new RatePacer();
        int i = 0;
        while (true) {
            long due = pacer.next(rate, 1_000_000);
            if (due == 0) {
                continue;
            }
            for (long k = 0; k < due; k++) {
                byte[][] row = rows.get(i);
                i = (i + 1) % rows.size();
                long t = System.nanoTime() / 1000 + offset;
                log.appendEvent(seq, FeedCodec.encodeEvent(seq, t, 0, row[0][0], row[1], 0, row[1].length, row[2], 0,
                        row[2].length, row[3], 0, row[3].length, row[4], 0, row[4].length, row[5], 0, row[5].length));
                seq++;
            }
            log.advanceDurable(seq - 1);
        }
    }
}
