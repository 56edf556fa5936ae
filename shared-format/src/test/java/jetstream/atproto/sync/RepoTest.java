package jetstream.atproto.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The production getRepo CAR walks to exactly the listing and commit indigo's goat printed. */
@Tag("unit")
class RepoTest {

    @Test
    void repoCarWalksToTheExpectedRecords() {
        Repo repo = Repo.read(Vectors.bytes("jetstream-corpus/repo.car"));
        List<String> walked = new ArrayList<>();
        long n = repo.walk((key, cid, block) -> {
            assertNotNull(block, "record block present");
            assertTrue(cid.matches(block.buffer(), block.offset(), block.length()));
            walked.add(new String(key, StandardCharsets.US_ASCII) + "\t" + cid);
        });
        List<String> expected = Vectors.lines("jetstream-corpus/car_expected_records.tsv")
                .filter(l -> !l.isBlank()).collect(Collectors.toList());
        assertEquals(23, expected.size());
        assertEquals(expected, walked);
        assertEquals(expected.size(), n);
        for (String line : expected) {
            String[] pathCid = line.split("\t");
            assertEquals(pathCid[1], repo.recordCid(pathCid[0]).toString(), pathCid[0]);
        }
        assertNull(repo.recordCid("app.bsky.feed.like/3lqdkdjpy6t2f"));
        assertNull(repo.recordCid("zzz.example/none"));
    }

    /** car_expected_commit.txt: "Key: value" lines as goat prints them; "<nil>" for an absent prev. */
    @Test
    void repoCarCommitMatches() {
        Map<String, String> want = Vectors.lines("jetstream-corpus/car_expected_commit.txt")
                .filter(l -> l.contains(": "))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(": ")), l -> l.substring(l.indexOf(": ") + 2)));
        assertEquals(5, want.size());
        Commit c = Repo.read(Vectors.bytes("jetstream-corpus/repo.car")).commit();
        assertEquals(Long.parseLong(want.get("ATProto Repo Spec Version")), c.version());
        assertEquals(want.get("DID"), c.did());
        assertEquals(want.get("Data CID"), c.data().toString());
        assertEquals("<nil>", want.get("Prev CID"));
        assertNull(c.prev());
        assertEquals(want.get("Revision"), c.rev());
        assertEquals(64, c.sig().length);
    }
}
