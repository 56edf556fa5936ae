package jetstream.cli;

import java.util.ArrayList;
import java.util.List;
import jetstream.client.Options;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** The options {@code subscribe}, {@code backfill} and {@code plan} share: where, which events, how to fetch. */
final class ClientOptions {
    @Option(names = "--host", required = true, paramLabel = "HOST",
            description = "the service: host[:port] or an http/https/ws/wss URL")
    String host;

    @Option(names = "--kinds", split = ",", paramLabel = "KIND", description = "event kinds (commit, identity, account, ...)")
    List<String> kinds = new ArrayList<>();

    @Option(names = "--collections", split = ",", paramLabel = "NSID", description = "collections; ns.* allowed")
    List<String> collections = new ArrayList<>();

    @Option(names = "--dids", split = ",", paramLabel = "DID", description = "repositories")
    List<String> dids = new ArrayList<>();

    @Option(names = "--out", paramLabel = "FILE", description = "write the JSON lines here ('-': stdout, the default)")
    String out = "-";

    @Option(names = "--api-key", paramLabel = "KEY", description = "sent as the API key on every request")
    String apiKey;

    @Option(names = "--limit", paramLabel = "N", converter = NonNegative.class, description = "stop after N events")
    long limit = Long.MAX_VALUE;

    @Option(names = "--quiet", description = "no progress or summary on stderr")
    boolean quiet;

    @Option(names = "--no-zstd", description = "ask the live stream for uncompressed frames")
    boolean noZstd;

    @Option(names = "--concurrency", paramLabel = "N", converter = NonNegative.class,
            description = "parallel fetch-and-decode tasks")
    Long concurrency;

    @Option(names = "--stripes", paramLabel = "N", converter = NonNegative.class,
            description = "block-aligned ranges of one segment in flight")
    Long stripes;

    @Option(names = "--max-attempts", paramLabel = "N", converter = NonNegative.class,
            description = "attempts per request before a unit fails")
    Long attempts;

    @Option(names = "--progress-every", paramLabel = "SECONDS", defaultValue = "5",
            description = "progress line interval when stderr is not a terminal (default ${DEFAULT-VALUE})")
    double progressSeconds;

    long progressMillis() {
        return Math.max(1, (long) (progressSeconds * 1000));
    }

    /** The library options for these flags and the command's window. */
    Options options(Long afterSeq, Long beforeSeq, boolean snapshotOnly, Long liveCursor) throws Main.UsageException {
        Options.Builder b = Options.builder().kinds(kinds).collections(collections).dids(dids).zstd(!noZstd);
        if (afterSeq != null) {
            b.afterSeq(afterSeq);
        }
        if (beforeSeq != null) {
            b.beforeSeq(beforeSeq);
        }
        if (snapshotOnly) {
            b.snapshotOnly();
        }
        if (liveCursor != null) {
            b.liveCursor(liveCursor);
        }
        if (apiKey != null) {
            b.apiKey(apiKey);
        }
        if (concurrency != null) {
            b.downloadConcurrency(Math.toIntExact(concurrency));
        }
        if (stripes != null) {
            b.segmentStripes(Math.toIntExact(stripes));
        }
        if (attempts != null) {
            b.maxDownloadAttempts(Math.toIntExact(attempts));
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        }
    }

    /** A seq, count or size: a non-negative integer. */
    static final class NonNegative implements ITypeConverter<Long> {
        @Override
        public Long convert(String v) {
            try {
                long n = Long.parseLong(v);
                if (n >= 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new TypeConversionException("must be a non-negative integer, not '" + v + "'");
        }
    }
}
