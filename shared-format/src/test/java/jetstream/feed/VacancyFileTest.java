package jetstream.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class VacancyFileTest {
    private static final Vacancy.Reason R = Vacancy.Reason.ABANDONED_LEASE;

    @Test
    void absentFileIsNoVacancies(@TempDir Path dir) throws Exception {
        assertEquals(List.of(), VacancyFile.load(dir));
    }

    @Test
    void roundTripsAndReplaces(@TempDir Path dir) throws Exception {
        List<Vacancy> one = List.of(new Vacancy(5, 10, R));
        VacancyFile.write(dir, one);
        assertEquals(one, VacancyFile.load(dir));
        List<Vacancy> two = List.of(new Vacancy(5, 10, R), new Vacancy(10, 20, R), new Vacancy(4000, 8096, R));
        VacancyFile.write(dir, two);
        assertEquals(two, VacancyFile.load(dir));
        assertFalse(Files.exists(dir.resolve(VacancyFile.NAME + ".tmp")));
        VacancyFile.write(dir, List.of());
        assertEquals(List.of(), VacancyFile.load(dir));
    }

    @Test
    void unorderedInputIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> VacancyFile.serialize(List.of(new Vacancy(5, 10, R), new Vacancy(7, 12, R))));
    }

    @Test
    void everyCorruptionIsDetected(@TempDir Path dir) throws Exception {
        byte[] good = VacancyFile.serialize(List.of(new Vacancy(5, 10, R), new Vacancy(12, 20, R)));
        int cases = 0;
        for (int i = 0; i < good.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[i] ^= (byte) (1 << bit);
                assertThrows(VacancyFile.Corrupt.class, () -> VacancyFile.parse(dir, bad));
                cases++;
            }
        }
        for (int cut = 0; cut < good.length; cut++) {
            byte[] bad = java.util.Arrays.copyOf(good, cut);
            assertThrows(VacancyFile.Corrupt.class, () -> VacancyFile.parse(dir, bad));
            cases++;
        }
        assertEquals(good.length * 9, cases);
    }

    @Test
    void explainsOnlyRegisteredJumps() {
        List<Vacancy> v = List.of(new Vacancy(5, 10, R), new Vacancy(10, 20, R), new Vacancy(30, 31, R));
        assertTrue(VacancyFile.explains(v, 3, 4));
        assertTrue(VacancyFile.explains(v, 4, 20));
        assertTrue(VacancyFile.explains(v, 4, 10));
        assertFalse(VacancyFile.explains(v, 4, 21));
        assertFalse(VacancyFile.explains(v, 3, 5));
        assertTrue(VacancyFile.explains(v, 29, 31));
        assertFalse(VacancyFile.explains(v, 29, 32));
        assertFalse(VacancyFile.explains(List.of(), 1, 3));
        assertTrue(VacancyFile.explains(List.of(), 1, 2));
    }
}
