package jetstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class JmhTest {
    /** Stands for a JMH class with two floors: explicit pairings, one of them twice. */
    public static class TwoFloors {
        @Floor("floorCopy")
        public void decode() {}

        @Floor(value = "floorCopy", metric = "encode_vs_copy_ns")
        @Floor("rawZstd")
        public void encode() {}

        public void unpaired() {}

        public void floorCopy() {}

        public void rawZstd() {}
    }

    /** Stands for a JMH class with one {@code floor*} method and no annotation. */
    public static class OneFloor {
        public void walk() {}

        public void floorSha() {}
    }

    private static Jmh.Score score(Class<?> c, String method, double value) {
        return score(c, method, Map.of(), value);
    }

    private static Jmh.Score score(Class<?> c, String method, Map<String, String> params, double value) {
        return new Jmh.Score(c.getName() + "." + method, "avgt", params, value, "ns/op");
    }

    @Test
    void explicitFloorsPairAndFloorsGetNoLineOfTheirOwn() {
        List<String> lines = Jmh.lines(List.of(score(TwoFloors.class, "decode", 300), score(TwoFloors.class, "encode", 50),
                score(TwoFloors.class, "floorCopy", 10), score(TwoFloors.class, "rawZstd", 40),
                score(TwoFloors.class, "unpaired", 7)));
        assertEquals(List.of(
                "RESULT two_floors_decode_ns_per_op value=300 floor=10 ratio=30",
                "RESULT encode_vs_copy_ns value=50 floor=10 ratio=5",
                "RESULT two_floors_encode_ns_per_op_vs_raw_zstd value=50 floor=40 ratio=1.25",
                "RESULT two_floors_unpaired_ns_per_op value=7 floor=none ratio=none"), lines);
    }

    @Test
    void aClassWithOneFloorMethodPairsEveryOtherBenchmarkWithIt() {
        assertEquals(List.of("RESULT one_floor_walk_ns_per_op value=2 floor=1 ratio=2"),
                Jmh.lines(List.of(score(OneFloor.class, "floorSha", 1), score(OneFloor.class, "walk", 2))));
    }

    @Test
    void aFloorThatDidNotRunLeavesNone() {
        assertEquals(List.of("RESULT one_floor_walk_ns_per_op value=2 floor=none ratio=none"),
                Jmh.lines(List.of(score(OneFloor.class, "walk", 2))));
    }

    @Test
    void parametersAndModeSelectTheFloorOfTheSameConfiguration() {
        Jmh.Score thrpt = new Jmh.Score(OneFloor.class.getName() + ".floorSha", "thrpt", Map.of("n", "64"), 99, "ops/s");
        List<String> lines = Jmh.lines(List.of(thrpt, score(OneFloor.class, "floorSha", Map.of("n", "8"), 3),
                score(OneFloor.class, "floorSha", Map.of("n", "64"), 5), score(OneFloor.class, "walk", Map.of("n", "64"), 20)));
        assertEquals(List.of("RESULT one_floor_walk_n_64_ns_per_op value=20 floor=5 ratio=4"), lines);
    }
}
