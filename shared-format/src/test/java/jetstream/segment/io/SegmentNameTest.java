package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SegmentNameTest {

    @Test
    void formatsFactsExamples() {
        assertEquals("seg_0000000000.jss", SegmentName.format(0));
        assertEquals("seg_0000000016.jss", SegmentName.format(42));
        assertEquals("seg_zzzzzzzzzz.jss", SegmentName.format(SegmentName.MAX_INDEX));
        assertThrows(IllegalArgumentException.class, () -> SegmentName.format(-1));
        assertThrows(IllegalArgumentException.class, () -> SegmentName.format(SegmentName.MAX_INDEX + 1));
    }

    @Test
    void parseIsTheInverseOfFormat() {
        long[] samples = {0, 1, 35, 36, 42, 1295, 1296, 123_456_789L, SegmentName.MAX_INDEX};
        for (long i : samples) {
            assertEquals(i, SegmentName.parse(SegmentName.format(i)));
        }
    }

    @Test
    void parseRejectsNamesThatDoNotReformat() {
        String[] bad = {
            "seg_000000001G.jss", "seg_00000000016.jss", "seg_016.jss", "seg_000000016.jss",
            "seg_0000000016.JSS", "SEG_0000000016.jss", "seg_0000000016.jss.tmp", "seg_-000000016.jss",
            "seg_+000000016.jss", "seg_00000000 6.jss", "xseg_000000016.jss", "seg_0000000016_jss", ""
        };
        for (String name : bad) {
            assertEquals(-1, SegmentName.parse(name), name);
        }
    }

    @Test
    void scanIgnoresOtherNamesAndDirectoriesAndSorts(@TempDir Path dir) throws Exception {
        Files.createFile(dir.resolve(SegmentName.format(37)));
        Files.createFile(dir.resolve(SegmentName.format(2)));
        Files.createFile(dir.resolve(SegmentName.format(36)));
        Files.createFile(dir.resolve(SegmentName.format(2) + ".tmp"));
        Files.createFile(dir.resolve("seg_000000000A.jss"));
        Files.createFile(dir.resolve("notes.txt"));
        Files.createDirectory(dir.resolve(SegmentName.format(99)));
        List<SegmentName.Entry> found = SegmentName.scan(dir);
        assertEquals(List.of(2L, 36L, 37L), found.stream().map(SegmentName.Entry::index).toList());
        assertEquals(dir.resolve("seg_0000000010.jss"), found.get(1).path());
        assertEquals(List.of(), SegmentName.scan(dir.resolve("missing")));
    }
}
