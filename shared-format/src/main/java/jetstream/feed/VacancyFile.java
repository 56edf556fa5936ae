package jetstream.feed;

import com.dynatrace.hash4j.hashing.Hashing;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code data/vacancies.bin}: every registered vacancy, so readers that never open RocksDB can tell
 * a registered seq jump from a hole. Layout (big-endian): magic {@code "jsv1"}, u32 count, count
 * entries of u64 start, u64 end (exclusive), u8 reason code, then the XXH3-64 of everything before.
 * Entries are sorted by start and disjoint. Replaced whole by tmp write, fsync, rename, directory
 * fsync, so a reader sees the old or the new list, never a mix. A damaged file is our own
 * corruption: {@link Corrupt} is thrown, never an empty list.
 */
public final class VacancyFile {
    public static final String NAME = "vacancies.bin";
    private static final byte[] MAGIC = {'j', 's', 'v', '1'};
    private static final int ENTRY = 17;
    private static final int MAX_ENTRIES = 1 << 24;

    /** The vacancy file is damaged or does not follow its layout. */
    public static final class Corrupt extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Corrupt(Path file, String message) {
            super(file + ": corrupt vacancy file: " + message);
        }
    }

    private VacancyFile() {}

    public static Path path(Path dataDir) {
        return dataDir.resolve(NAME);
    }

    /** The vacancies of {@code dataDir}; empty when the file does not exist (no vacancy was ever registered). */
    public static List<Vacancy> load(Path dataDir) throws IOException {
        Path file = path(dataDir);
        byte[] b;
        try {
            b = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return List.of();
        }
        return parse(file, b);
    }

    static List<Vacancy> parse(Path file, byte[] b) {
        if (b.length < MAGIC.length + 4 + 8) {
            throw new Corrupt(file, "only " + b.length + " bytes");
        }
        ByteBuffer in = ByteBuffer.wrap(b);
        for (byte m : MAGIC) {
            if (in.get() != m) {
                throw new Corrupt(file, "bad magic");
            }
        }
        long count = Integer.toUnsignedLong(in.getInt());
        if (count > MAX_ENTRIES || b.length != MAGIC.length + 4 + count * ENTRY + 8) {
            throw new Corrupt(file, count + " entries do not fit " + b.length + " bytes");
        }
        long stored = ByteBuffer.wrap(b, b.length - 8, 8).getLong();
        long actual = Hashing.xxh3_64().hashBytesToLong(b, 0, b.length - 8);
        if (stored != actual) {
            throw new Corrupt(file, "checksum mismatch");
        }
        List<Vacancy> out = new ArrayList<>((int) count);
        long prevEnd = 1;
        for (int i = 0; i < count; i++) {
            long start = in.getLong();
            long end = in.getLong();
            Vacancy.Reason reason = Vacancy.Reason.ofCode(in.get() & 0xFF);
            if (reason == null || start < prevEnd || end <= start) {
                throw new Corrupt(file, "entry " + i + " [" + start + ", " + end + ") is unordered, empty or of unknown reason");
            }
            out.add(new Vacancy(start, end, reason));
            prevEnd = end;
        }
        return List.copyOf(out);
    }

    static byte[] serialize(List<Vacancy> vacancies) {
        ByteBuffer b = ByteBuffer.allocate(MAGIC.length + 4 + vacancies.size() * ENTRY + 8);
        b.put(MAGIC).putInt(vacancies.size());
        long prevEnd = 1;
        for (Vacancy v : vacancies) {
            if (v.start() < prevEnd) {
                throw new IllegalArgumentException("vacancies must be sorted and disjoint: " + vacancies);
            }
            b.putLong(v.start()).putLong(v.end()).put((byte) v.reason().code());
            prevEnd = v.end();
        }
        b.putLong(Hashing.xxh3_64().hashBytesToLong(b.array(), 0, b.position()));
        return b.array();
    }

    /** Replaces the file with {@code vacancies} (sorted, disjoint) durably: tmp, fsync, rename, directory fsync. */
    public static void write(Path dataDir, List<Vacancy> vacancies) throws IOException {
        byte[] bytes = serialize(vacancies);
        Path file = path(dataDir);
        Path tmp = dataDir.resolve(NAME + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            while (bb.hasRemaining()) {
                ch.write(bb);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the data directory's filesystem cannot rename atomically", e);
        }
        try (FileChannel dir = FileChannel.open(dataDir, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /**
     * Whether the seqs strictly between {@code lastSeq} and {@code nextSeq} are all covered by
     * {@code vacancies} (sorted, disjoint): cold replay may cross such a jump and must fail loudly on
     * any other.
     */
    public static boolean explains(List<Vacancy> vacancies, long lastSeq, long nextSeq) {
        long need = lastSeq + 1;
        for (Vacancy v : vacancies) {
            if (need >= nextSeq) {
                return true;
            }
            if (v.end() <= need) {
                continue;
            }
            if (v.start() > need) {
                return false;
            }
            need = v.end();
        }
        return need >= nextSeq;
    }
}
