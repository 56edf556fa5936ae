package jetstream.ingester;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import jetstream.feed.FeedFrame;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.GroundTruth;
import jetstream.testing.ArchiveRows;

/**
 * Test helper for network-size archives: folds the rows of a random sample of DIDs only (one
 * streaming pass over the segments, the sample's rows held) and compares each with the simulator's
 * ground truth, the way {@link BootstrapMergeComponentTest#verifyAgainstTruth} does for every DID.
 */
final class SampledFold {
    private SampledFold() {}

    /** The outcome: DIDs whose fold equals the truth, and the ones that differ, each with its repo status. */
    record Result(int sampled, int equal, List<String> unavailable, List<String> wrong) {}

    /** {@code n} distinct DIDs of the {@code accounts} accounts, chosen by {@code seed}. */
    static Set<String> sample(GroundTruth truth, int accounts, int n, long seed) {
        Random r = new Random(seed);
        Set<Integer> picked = new TreeSet<>();
        while (picked.size() < Math.min(n, accounts)) {
            picked.add(r.nextInt(accounts));
        }
        Set<String> out = new TreeSet<>();
        List<String> dids = truth.dids();
        for (int i : picked) {
            out.add(dids.get(i));
        }
        return out;
    }

    /**
     * Folds {@code sample}'s rows of the archive under {@code data} and compares each DID with the
     * truth. A DID may differ only when its {@code repo/} row says unavailable or failed (an account
     * that was not active when it was downloaded); any other difference is listed as wrong.
     */
    static Result compare(Path data, GroundTruth truth, Set<String> sample) throws IOException {
        List<FeedFrame.Event> rows = new ArrayList<>();
        ArchiveRows.forEach(data.resolve("segments"), (block, view, i) -> {
            if (sample.contains(view.did(i))) {
                rows.add(ArchiveScan.event(view, i));
            }
        });
        ArchiveFold fold = ArchiveFold.of(rows);
        int equal = 0;
        List<String> unavailable = new ArrayList<>();
        List<String> wrong = new ArrayList<>();
        try (MetaStore store = MetaStore.open(data)) {
            for (String did : sample) {
                if (fold.records(did).equals(ArchiveFold.text(truth.records(did)))) {
                    equal++;
                    continue;
                }
                byte[] row = store.get(RepoStatus.key(did));
                RepoStatus s = row == null ? null : RepoStatus.parse(did, row);
                String line = did + " (repo " + (s == null ? "none" : s.status().wire()) + ", truth " + truth.status(did)
                        + ", archive " + fold.records(did).size() + " records, truth " + truth.records(did).size() + ")";
                if (s != null && (s.status() == RepoStatus.Status.UNAVAILABLE || s.status() == RepoStatus.Status.FAILED)) {
                    unavailable.add(line);
                } else {
                    wrong.add(line);
                }
            }
        }
        return new Result(sample.size(), equal, unavailable, wrong);
    }
}
