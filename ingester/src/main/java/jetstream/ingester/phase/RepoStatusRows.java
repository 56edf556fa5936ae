package jetstream.ingester.phase;

import java.time.Instant;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;

/** {@link MergeRepos} on the stored {@code repo/<did>} rows ({@link RepoStatus}, docs/metadata-keys.md). */
public final class RepoStatusRows implements MergeRepos {
    private final MetaStore store;

    public RepoStatusRows(MetaStore store) {
        this.store = store;
    }

    @Override
    public Backfilled backfill(String did) {
        byte[] json = store.get(RepoStatus.key(did));
        if (json == null) {
            return null;
        }
        RepoStatus r = RepoStatus.parse(did, json);
        return new Backfilled(r.status().wire(), r.backfillRev());
    }

    @Override
    public byte[] withLatestRev(String did, String rev, Instant now) {
        byte[] json = store.get(RepoStatus.key(did));
        if (json == null) {
            return null;
        }
        return RepoStatus.parse(did, json).rev(rev).updatedAt(now).toJson();
    }
}
