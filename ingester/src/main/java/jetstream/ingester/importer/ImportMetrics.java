package jetstream.ingester.importer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicInteger;

/** The {@code jetstream_import_*} meters (docs/metrics.md). */
final class ImportMetrics {
    private final MeterRegistry r;
    final Timer jobDuration;
    /** 0 idle, 1 parse_bucket, 2 apply. */
    final AtomicInteger phase = new AtomicInteger();
    final Counter rowsParsed;
    final Counter rowsMutated;
    final Counter rowsCorruptOffset;
    final Counter didsMatched;
    final Counter segmentsExamined;
    final Counter segmentsPatched;
    final Counter bytesRewritten;

    ImportMetrics(MeterRegistry r) {
        this.r = r;
        jobDuration = Timer.builder("jetstream_import_job_duration_seconds").register(r);
        Gauge.builder("jetstream_import_phase", phase, AtomicInteger::get).register(r);
        // both outcomes exist from the start, so an alert on failed jobs has a series to compare against
        r.counter("jetstream_import_jobs_total", "result", "complete");
        r.counter("jetstream_import_jobs_total", "result", "failed");
        rowsParsed = r.counter("jetstream_import_rows_parsed_total");
        rowsMutated = r.counter("jetstream_import_rows_mutated_total");
        rowsCorruptOffset = r.counter("jetstream_import_rows_corrupt_offset_total");
        didsMatched = r.counter("jetstream_import_dids_matched_total");
        segmentsExamined = r.counter("jetstream_import_segments_examined_total");
        segmentsPatched = r.counter("jetstream_import_segments_patched_total");
        bytesRewritten = r.counter("jetstream_import_bytes_rewritten_total");
        for (String reason : ImportCsv.REJECT_REASONS) {
            rejected(reason, 0);
        }
        matched("all_versions", 0);
        matched("specific_version", 0);
    }

    void job(String result) {
        r.counter("jetstream_import_jobs_total", "result", result).increment();
    }

    void rejected(String reason, long n) {
        r.counter("jetstream_import_rows_rejected_total", "reason", reason).increment(n);
    }

    void matched(String scope, long n) {
        r.counter("jetstream_import_rows_matched_total", "scope", scope).increment(n);
    }
}
