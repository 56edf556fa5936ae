package jetstream.ingester.backfill;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import jetstream.feed.FeedFrame;

/**
 * A snapshot of a backfill run: hosts, repos by status, records and bytes archived, the record
 * rate and an ETA. Published as the log line, the {@code jetstream_backfill_progress_*} gauges, the
 * {@code backfill/counts} row and the feed's {@code BACKFILL_PROGRESS} frame.
 *
 * @param reposTotal every {@code repo/<did>} row known (all statuses)
 * @param reposDone rows in a terminal status (complete, failed, unavailable)
 * @param discovered rows still {@code not_started}
 * @param hostsRetrying hosts parked for their retry, or exhausted with a re-enumeration scheduled ({@link HostOutcomes})
 * @param etaSeconds -1 while unknown
 */
public record BackfillProgress(long hostsTotal, long hostsTerminal, long hostsDrained, long hostsExhausted,
                               long hostsRetrying, long reposTotal, long reposDone, long discovered, long pending, long complete, long failed,
                               long unavailable, long records, long bytes, double recordsPerSecond, long etaSeconds) {
    public static final BackfillProgress EMPTY = new BackfillProgress(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1);
    /** The maintained aggregate row (docs/metadata-keys.md). */
    public static final String COUNTS_KEY = "backfill/counts";

    public FeedFrame.BackfillProgress frame() {
        return new FeedFrame.BackfillProgress(reposTotal, discovered, pending, complete, failed, unavailable,
                new FeedFrame.BackfillProgress.Hosts(hostsTotal, hostsDrained, hostsExhausted, hostsRetrying));
    }

    /** {@code backfill/counts}: {@code {total, discovered, pending, complete, failed, unavailable, hosts_drained?, hosts_exhausted?, hosts_retrying?}}. */
    public byte[] countsJson() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(160);
        try (JsonGenerator g = SyncCalls.JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("total", reposTotal);
            g.writeNumberField("discovered", discovered);
            g.writeNumberField("pending", pending);
            g.writeNumberField("complete", complete);
            g.writeNumberField("failed", failed);
            g.writeNumberField("unavailable", unavailable);
            if (hostsDrained != 0) {
                g.writeNumberField("hosts_drained", hostsDrained);
            }
            if (hostsExhausted != 0) {
                g.writeNumberField("hosts_exhausted", hostsExhausted);
            }
            if (hostsRetrying != 0) {
                g.writeNumberField("hosts_retrying", hostsRetrying);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * The last {@code backfill/counts} row (null: none yet) with the host outcomes now: what the
     * steady state publishes, when no engine run keeps the counts in memory.
     */
    public static BackfillProgress fromCounts(byte[] countsJson, HostOutcomes hosts) {
        long[] c = new long[6];
        if (countsJson != null) {
            try (com.fasterxml.jackson.core.JsonParser p = SyncCalls.JSON.createParser(countsJson)) {
                if (p.nextToken() == com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                    while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        p.nextToken();
                        int i = java.util.List.of("total", "discovered", "pending", "complete", "failed", "unavailable")
                                .indexOf(name);
                        if (i >= 0) {
                            c[i] = p.getLongValue();
                        } else {
                            p.skipChildren();
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("our own backfill/counts row is not JSON", e);
            }
        }
        return new BackfillProgress(hosts.total(), hosts.drained() + hosts.exhausted(), hosts.drained(), hosts.exhausted(),
                hosts.retrying(), c[0], c[3] + c[4] + c[5], c[1], c[2], c[3], c[4], c[5], 0, 0, 0, -1);
    }

    /** The progress log line. */
    public String line() {
        String eta = etaSeconds < 0 ? "unknown" : String.format("%dh%02dm%02ds", etaSeconds / 3600, etaSeconds / 60 % 60,
                etaSeconds % 60);
        return String.format("backfill: hosts %d/%d terminal (%d drained, %d exhausted, %d retrying), repos %d/%d done (%d complete,"
                        + " %d failed, %d unavailable, %d pending), %d records, %.1f MiB, %.0f records/s, ETA %s",
                hostsTerminal, hostsTotal, hostsDrained, hostsExhausted, hostsRetrying, reposDone, reposTotal, complete, failed,
                unavailable, pending, records, bytes / 1048576.0, recordsPerSecond, eta);
    }
}
